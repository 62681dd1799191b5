package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpConfig leaves the Env lookup function out of comparisons; functions
// never compare equal. EquateEmpty because the decoder gives empty maps
// and lists where Default has nil ones.
var cmpConfig = cmp.Options{cmpopts.IgnoreFields(Config{}, "Env"), cmpopts.EquateEmpty()}

// envOf is an EnvFunc over a map, so no test depends on the machine.
func envOf(vars map[string]string) EnvFunc {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// fixture is a project root and user dir with optional odin.yaml files.
type fixture struct {
	root, userDir, home string
}

func newFixture(t *testing.T, user, project string) fixture {
	t.Helper()
	f := fixture{root: t.TempDir(), userDir: t.TempDir(), home: t.TempDir()}
	if user != "" {
		writeFile(t, filepath.Join(f.userDir, FileName), user)
	}
	if project != "" {
		writeFile(t, filepath.Join(f.root, FileName), project)
	}
	return f
}

func (f fixture) options(env map[string]string, flags map[string]any) LoadOptions {
	vars := map[string]string{"HOME": f.home}
	for k, v := range env {
		vars[k] = v
	}
	return LoadOptions{Root: f.root, UserDir: f.userDir, LookupEnv: envOf(vars), Flags: flags}
}

func (f fixture) load(t *testing.T, env map[string]string, flags map[string]any) (*Config, *Sources) {
	t.Helper()
	cfg, src, err := Load(f.options(env, flags))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg, src
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// Tests write YAML with tabs for readability in Go source; YAML
	// forbids tabs for indentation, so they become two spaces.
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(content, "\t", "  ")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// problems returns the lines of an *Error, failing the test otherwise.
func problems(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		t.Fatal("got no error")
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not *config.Error: %v", err, err)
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return lines
}

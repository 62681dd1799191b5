package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// repoRoot is the repository root, where the worked example odin.yaml is.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRepositoryOdinYAMLLoadsAndValidates(t *testing.T) {
	root := repoRoot(t)
	cfg, src, err := Load(LoadOptions{Root: root, UserDir: t.TempDir(), LookupEnv: envOf(map[string]string{"HOME": t.TempDir()})})
	if err != nil {
		t.Fatalf("the repository's odin.yaml does not load:\n%v", err)
	}
	if src.ProjectFile != filepath.Join(root, FileName) {
		t.Errorf("project file = %q", src.ProjectFile)
	}
	// The example must not pin the OpenAI base_url, or $OPENAI_BASE_URL
	// would stop working for anyone who copies it.
	if got := src.Origin("providers.openai.base_url"); got != labelDefault {
		t.Errorf("providers.openai.base_url comes from %q; the example must leave it to the default", got)
	}
	// Widening keys in the example are exactly the ones it documents.
	want := []string{"hooks.PostToolUse", "model_info.qwen2.5-coder:7b.provider", "permissions.allowed_commands",
		"permissions.sandbox_limits", "providers.ollama", "quality.build", "quality.coverage", "quality.format", "quality.lint", "quality.public_api", "quality.test"}
	if diff := cmp.Diff(want, src.ProjectWidens()); diff != "" {
		t.Errorf("ProjectWidens of the example (-want +got):\n%s", diff)
	}
	if _, err := cfg.ResolveModel("small"); err == nil {
		t.Error("with no OPENAI_API_KEY, the example's small model must need one")
	}
}

// TestRepositoryOdinYAMLDocumentsEveryKey walks Config by reflection and
// fails for any key the example does not set, so a key added to the
// structs without documentation in odin.yaml fails the build.
func TestRepositoryOdinYAMLDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), FileName))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	missing := missingKeys(configType, "", []any{doc})
	if len(missing) > 0 {
		t.Errorf("odin.yaml does not document these keys:\n  %s", strings.Join(missing, "\n  "))
	}
}

// missingKeys lists the keys of t absent from all of nodes (the values at
// this point of the document: for map entries and list items, every
// entry, so a key counts as documented if any entry shows it).
func missingKeys(t reflect.Type, prefix string, nodes []any) []string {
	var missing []string
	names, fields := fieldsOf(t)
	for _, name := range names {
		key := joinKey(prefix, name)
		var children []any
		for _, n := range nodes {
			if m, ok := n.(map[string]any); ok {
				if v, ok := m[name]; ok {
					children = append(children, v)
				}
			}
		}
		if len(children) == 0 {
			missing = append(missing, key)
			continue
		}
		ft := fields[name].Type
		switch {
		case ft == durationType:
		case ft.Kind() == reflect.Struct:
			missing = append(missing, missingKeys(ft, key, children)...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			missing = append(missing, missingKeys(ft.Elem(), key+".*", entries(children))...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Slice:
			var items []any
			for _, e := range entries(children) {
				if l, ok := e.([]any); ok {
					items = append(items, l...)
				}
			}
			missing = append(missing, missingKeys(ft.Elem().Elem(), key+".*[]", items)...)
		}
	}
	return missing
}

func entries(nodes []any) []any {
	var out []any
	for _, n := range nodes {
		if m, ok := n.(map[string]any); ok {
			for _, v := range m {
				out = append(out, v)
			}
		}
	}
	return out
}

func TestMissingKeysNoticesAGap(t *testing.T) {
	// The documentation check must be able to fail.
	doc := map[string]any{"models": map[string]any{"main": "x"}, "hooks": map[string]any{"Stop": []any{map[string]any{"command": "x"}}}}
	missing := missingKeys(configType, "", []any{doc})
	for _, k := range []string{"models.small", "hooks.*[].matcher", "hooks.*[].timeout", "provider", "web"} {
		if !contains(missing, k) {
			t.Errorf("missingKeys does not report %s: %v", k, missing)
		}
	}
	if contains(missing, "models.main") || contains(missing, "hooks.*[].command") {
		t.Errorf("missingKeys reports present keys: %v", missing)
	}
}

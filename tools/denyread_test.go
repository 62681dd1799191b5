package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/readdeny"
	"github.com/odin-code/odin/internal/repomap"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/tools/tool"
)

// openGuard resolves like the real guard and allows everything: a user who
// approved every path (or --yolo). The read deny list must hold anyway.
type openGuard struct{ root string }

func (g openGuard) Resolve(_ context.Context, path string, _ tool.Access) (string, error) {
	return workspace.Resolve(g.root, path)
}

const (
	canaryKey = "CANARY-ssh-7f3a"
	canaryAWS = "CANARY-aws-19bd"
	canaryEnv = "CANARY-env-c0de"
	canaryGo  = "CanaryVaultFunc"
)

// denyEnv is a fake home with an SSH key and AWS credentials, a project in
// it with a .env, a .env.example, a link to the key and a denied
// directory of Go code; the Env's deny list is built from user patterns.
func denyEnv(t *testing.T, user ...string) (*tool.Env, string) {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(home, "proj")
	writeTestFile(t, home, ".ssh/id_rsa", canaryKey+"\n")
	writeTestFile(t, home, ".aws/credentials", "[default]\nkey = "+canaryAWS+"\n")
	writeTestFile(t, root, ".env", "TOKEN="+canaryEnv+"\n")
	writeTestFile(t, root, ".env.example", "TOKEN=\n")
	writeTestFile(t, root, "main.go", "package main\n\n// CANARY appears in code too.\nfunc main() {}\n")
	writeTestFile(t, root, "vault/vault.go", "package vault\n\n// CANARY-go\nfunc "+canaryGo+"() {}\n")
	if err := os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	rules, err := readdeny.New(readdeny.Options{Home: home, Root: root, User: append([]string{"vault/"}, user...)})
	if err != nil {
		t.Fatal(err)
	}
	return &tool.Env{Root: root, Agent: "test", Reads: tool.NewReadState(), Guard: openGuard{root: root}, DenyRead: rules}, home
}

func assertNoCanary(t *testing.T, what string, res tool.Result) {
	t.Helper()
	for _, c := range []string{canaryKey, canaryAWS, canaryEnv, canaryGo, "CANARY-go"} {
		if strings.Contains(res.Output, c) {
			t.Errorf("%s: %s reached the model:\n%s", what, c, res.Output)
		}
	}
}

// TestDenyReadFileTools: no file tool puts a byte of a denied file in front
// of the model, whichever way it is asked.
func TestDenyReadFileTools(t *testing.T) {
	env, home := denyEnv(t)
	root := env.Root
	refused := []struct {
		name string
		tool tool.Tool
		in   map[string]any
	}{
		{"ReadFile key", NewReadFile(), map[string]any{"file_path": home + "/.ssh/id_rsa"}},
		{"ReadFile aws", NewReadFile(), map[string]any{"file_path": home + "/.aws/credentials"}},
		{"ReadFile .env", NewReadFile(), map[string]any{"file_path": root + "/.env"}},
		{"ReadFile via ..", NewReadFile(), map[string]any{"file_path": root + "/../.ssh/id_rsa"}},
		{"ReadFile link to key", NewReadFile(), map[string]any{"file_path": root + "/notes.txt"}},
		{"ReadFile in denied dir", NewReadFile(), map[string]any{"file_path": root + "/vault/vault.go"}},
		{"Grep a denied file", NewGrep(), map[string]any{"pattern": "CANARY", "path": root + "/.env", "output_mode": "content"}},
		{"Grep a denied dir", NewGrep(), map[string]any{"pattern": "CANARY", "path": home + "/.ssh", "output_mode": "content"}},
		{"LS a denied dir", NewLS(), map[string]any{"path": home + "/.aws"}},
		{"Tree a denied dir", NewTree(), map[string]any{"path": home + "/.ssh"}},
		{"Glob a denied dir", NewGlob(), map[string]any{"pattern": "*", "path": home + "/.ssh"}},
		{"EditTool .env", NewEditTool(), map[string]any{"file_path": root + "/.env", "old_string": "TOKEN=", "new_string": "X="}},
		{"WriteFile .env", NewWriteFile(), map[string]any{"file_path": root + "/.env", "content": "replaced"}},
		{"MultiEdit .env", NewMultiEdit(), map[string]any{"file_path": root + "/.env", "edits": []map[string]any{{"old_string": "TOKEN=", "new_string": "X="}}}},
	}
	for _, tc := range refused {
		res := runTool(t, tc.tool, env, tc.in)
		if !res.IsError || !res.Denied || !strings.Contains(res.Output, "read deny list") {
			t.Errorf("%s: not refused as a denial: %+v", tc.name, res)
		}
		assertNoCanary(t, tc.name, res)
	}
	if data, _ := os.ReadFile(root + "/.env"); !strings.Contains(string(data), canaryEnv) {
		t.Errorf(".env was changed by a refused edit: %q", data)
	}

	// Searches over the whole home directory skip what is denied.
	searches := []struct {
		name string
		tool tool.Tool
		in   map[string]any
	}{
		{"Grep home", NewGrep(), map[string]any{"pattern": "CANARY|key|TOKEN|func", "path": home, "output_mode": "content"}},
		{"Grep home, files", NewGrep(), map[string]any{"pattern": ".", "path": home}},
		{"Grep project, glob .env*", NewGrep(), map[string]any{"pattern": "TOKEN", "path": root, "glob": ".env*", "output_mode": "content"}},
		{"Glob", NewGlob(), map[string]any{"pattern": "**/.env*", "path": root}},
		{"Glob home", NewGlob(), map[string]any{"pattern": "**/*", "path": home}},
		{"Tree home", NewTree(), map[string]any{"path": home}},
		{"LS home", NewLS(), map[string]any{"path": home}},
		{"LS project", NewLS(), map[string]any{"path": root}},
	}
	for _, tc := range searches {
		res := runTool(t, tc.tool, env, tc.in)
		assertNoCanary(t, tc.name, res)
		for _, name := range []string{".ssh", ".aws", "/.env\n", "vault", "notes.txt"} {
			if strings.Contains(res.Output+"\n", name) {
				t.Errorf("%s lists denied %q:\n%s", tc.name, name, res.Output)
			}
		}
	}
	// What is not denied is still found: the lists are not simply empty.
	if res := runTool(t, NewGlob(), env, map[string]any{"pattern": "**/.env*", "path": root}); !strings.Contains(res.Output, ".env.example") {
		t.Errorf("Glob lost .env.example:\n%s", res.Output)
	}
	if res := runTool(t, NewGrep(), env, map[string]any{"pattern": "CANARY", "path": root}); !strings.Contains(res.Output, "main.go") {
		t.Errorf("Grep lost main.go:\n%s", res.Output)
	}
	if res := runTool(t, NewReadFile(), env, map[string]any{"file_path": root + "/.env.example"}); res.IsError {
		t.Errorf("ReadFile .env.example: %s", res.Output)
	}
}

// TestDenyReadRepoMap: files beneath a denied directory are not mapped.
func TestDenyReadRepoMap(t *testing.T) {
	env, _ := denyEnv(t)
	pool := repomap.NewPool(repomap.Options{CacheDir: t.TempDir(), Exclude: env.DenyRead.Hides})
	defer pool.Close()
	res := runTool(t, NewRepoMap(pool), env, map[string]any{})
	if res.IsError || !strings.Contains(res.Output, "main.go") {
		t.Fatalf("RepoMap: %s", res.Output)
	}
	assertNoCanary(t, "RepoMap", res)
	if res := runTool(t, NewRepoMap(pool), env, map[string]any{"path": env.Root + "/vault"}); !res.Denied {
		t.Errorf("RepoMap of a denied directory: %+v", res)
	}
}

// TestDenyReadOptOut: the user's "!.env" makes .env readable (so the tests
// above can fail), while the key stays denied.
func TestDenyReadOptOut(t *testing.T) {
	env, home := denyEnv(t, "!.env")
	res := runTool(t, NewReadFile(), env, map[string]any{"file_path": env.Root + "/.env"})
	if res.IsError || !strings.Contains(res.Output, canaryEnv) {
		t.Errorf("ReadFile .env after !.env: %+v", res)
	}
	if res := runTool(t, NewReadFile(), env, map[string]any{"file_path": home + "/.ssh/id_rsa"}); !res.Denied {
		t.Errorf("!.env lifted ~/.ssh: %+v", res)
	}
}

// TestDenyReadGitDiff: a committed .env that changed shows no line of its
// diff (old or new), and an untracked denied file is listed, not diffed.
func TestDenyReadGitDiff(t *testing.T) {
	env := newRepoEnv(t)
	writeTestFile(t, env.Root, ".env", "TOKEN=CANARY-committed-1\n")
	writeTestFile(t, env.Root, "a b.txt", "one\n")
	gitT(t, env.Root, "add", ".env", "a b.txt")
	gitT(t, env.Root, "commit", "-qm", "secrets")
	writeTestFile(t, env.Root, ".env", "TOKEN=CANARY-changed-2\n")
	writeTestFile(t, env.Root, "a b.txt", "two\n")
	writeTestFile(t, env.Root, "svc/.env.local", "TOKEN=CANARY-untracked-3\n")
	in := map[string]any{"include_untracked": true}
	if res := runTool(t, NewGitDiff(), env, in); !strings.Contains(res.Output, "CANARY-changed-2") {
		t.Fatalf("control: without a deny list the diff shows .env:\n%s", res.Output)
	}
	rules, err := readdeny.New(readdeny.Options{Root: env.Root})
	if err != nil {
		t.Fatal(err)
	}
	env.DenyRead = rules
	res := runTool(t, NewGitDiff(), env, in)
	if strings.Contains(res.Output, "CANARY") {
		t.Errorf("GitDiff showed a denied file's lines:\n%s", res.Output)
	}
	for _, want := range []string{".env is on the read deny list", "+two", "svc/.env.local (on the read deny list"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("GitDiff lacks %q:\n%s", want, res.Output)
		}
	}
	if got := diffPaths(`"a/x \"y\".txt" "b/x \"y\".txt"`); len(got) != 2 || got[0] != `x "y".txt` {
		t.Errorf("diffPaths of quoted names = %q", got)
	}
}

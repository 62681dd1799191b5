package trust

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pinProject writes files (name → content; "->target" makes a symlink)
// under a new root.
func pinProject(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func pinKeys(p Pins) []string {
	var keys []string
	for k, v := range p {
		if v == pinAbsent {
			k += " (absent)"
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestPinProgram: what each command line pins: the script of the common
// interpreters, the program itself when it is a path, a directory's entry
// file, python -m's module, what a hook's shell command runs, and any
// argument naming an existing project file; nothing outside the project.
func TestPinProgram(t *testing.T) {
	files := map[string]string{
		"srv.py": "print()", "srv.js": "1", "hook.sh": "echo", "tool.rb": "p", "x.pl": "1", "x.php": "<?php",
		"main.go": "package main", "conf.json": "{}", "bin/srv": "#!/bin/sh",
		"app/package.json": `{"main": "lib/start.js"}`, "app/lib/start.js": "1", "pyapp/__main__.py": "1",
		"pkg/__init__.py": "", "pkg/mod.py": "", "pkg/data.txt": "", "cmd/s/a.go": "", "cmd/s/b.go": "", "cmd/s/sub/c.go": "",
		"link.py": "->srv.py", "hooks/a.py": "", "hooks/b.py": "",
	}
	root := pinProject(t, files)
	outside := filepath.Join(t.TempDir(), "out.py")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		prog Program
		want []string
	}{
		{"python script", Program{Argv: []string{"python3", "-u", "srv.py", "--port", "1"}}, []string{"srv.py"}},
		{"python3.12 absolute", Program{Argv: []string{"/usr/bin/python3.12", filepath.Join(root, "srv.py")}}, []string{"srv.py"}},
		{"python -c", Program{Argv: []string{"python3", "-c", "import os"}}, nil},
		{"python dir", Program{Argv: []string{"python3", "pyapp"}}, []string{"pyapp/__main__.py"}},
		{"python -m package", Program{Argv: []string{"python", "-m", "pkg.mod"}}, []string{"pkg/"}},
		{"python -m missing", Program{Argv: []string{"python", "-m", "http.server"}}, []string{"http.py (absent)", "http/ (absent)"}},
		{"python missing script", Program{Argv: []string{"python3", "gone.py"}}, []string{"gone.py (absent)"}},
		{"node script", Program{Argv: []string{"node", "--enable-source-maps", "srv.js"}}, []string{"srv.js"}},
		{"node dir", Program{Argv: []string{"node", "app"}}, []string{"app/lib/start.js", "app/package.json"}},
		{"node require", Program{Argv: []string{"node", "-r", "./srv.js", "-e", "1"}}, []string{"srv.js"}},
		{"deno run", Program{Argv: []string{"deno", "run", "-A", "srv.js"}}, []string{"srv.js"}},
		{"deno remote", Program{Argv: []string{"deno", "run", "npm:foo"}}, nil},
		{"bun", Program{Argv: []string{"bun", "run", "srv.js"}}, []string{"srv.js"}},
		{"ruby perl php", Program{Shell: "ruby -w tool.rb; perl x.pl; php x.php"}, []string{"tool.rb", "x.php", "x.pl"}},
		{"bash script", Program{Argv: []string{"bash", "-e", "hook.sh"}}, []string{"hook.sh"}},
		{"sh -c nested", Program{Argv: []string{"sh", "-c", "bash hook.sh && python3 srv.py"}}, []string{"hook.sh", "srv.py"}},
		{"program path", Program{Argv: []string{"./bin/srv", "--config", "conf.json"}}, []string{"bin/srv", "conf.json"}},
		{"flag value", Program{Argv: []string{"server", "--config=conf.json"}}, []string{"conf.json"}},
		{"uv run", Program{Argv: []string{"uv", "run", "--with", "mcp", "srv.py"}}, []string{"srv.py"}},
		{"npx local", Program{Argv: []string{"npx", "-y", "./srv.js"}}, []string{"srv.js"}},
		{"npx package", Program{Argv: []string{"npx", "-y", "@scope/tool@1.2"}}, []string{"node_modules/.bin/tool (absent)"}},
		{"go run files", Program{Argv: []string{"go", "run", "main.go", "arg"}}, []string{"main.go"}},
		{"go run package", Program{Argv: []string{"go", "run", "./cmd/s"}}, []string{"cmd/s/"}},
		{"env wrapper", Program{Argv: []string{"env", "A=1", "python3", "srv.py"}}, []string{"srv.py"}},
		{"symlink", Program{Argv: []string{"python3", "link.py"}}, []string{"link.py"}},
		{"outside the project", Program{Argv: []string{"python3", outside}}, nil},
		{"hook with project var", Program{Shell: `"$CLAUDE_PROJECT_DIR"/hook.sh < /dev/null`, Env: map[string]string{"CLAUDE_PROJECT_DIR": root}}, []string{"hook.sh"}},
		{"hook glob", Program{Shell: "for f in x; do python3 hooks/*.py; done"}, []string{"hooks/a.py"}},
		{"hook data files", Program{Shell: "touch conf.json; ./bin/srv conf.json > srv.js"}, []string{"bin/srv"}},
		{"stdin script", Program{Shell: "bash < hook.sh"}, []string{"hook.sh"}},
		{"plain command", Program{Shell: "echo hi | grep h"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pins, err := PinProgram(root, tt.prog)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, pinKeys(pins)); diff != "" {
				t.Errorf("pins (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPinChanges: a rewritten, deleted or newly created file is reported,
// by name; untouched files and unrelated edits are not.
func TestPinChanges(t *testing.T) {
	root := pinProject(t, map[string]string{"srv.py": "v1", "other.py": "x", "pkg/__init__.py": "", "pkg/a.py": "1"})
	pin := func(p Program) Pins {
		t.Helper()
		pins, err := PinProgram(root, p)
		if err != nil {
			t.Fatal(err)
		}
		return pins
	}
	script := Program{Argv: []string{"python3", "srv.py"}}
	module := Program{Argv: []string{"python3", "-m", "pkg"}}
	missing := Program{Argv: []string{"node", "later.js"}}
	was := []Pins{pin(script), pin(module), pin(missing)}
	if err := os.WriteFile(filepath.Join(root, "other.py"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, p := range []Program{script, module, missing} {
		if c := was[i].Changes(pin(p)); c != nil {
			t.Errorf("unrelated edit: %v", c)
		}
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("srv.py", "v2")
	write("pkg/b.py", "new module")
	write("later.js", "appeared")
	for i, want := range []string{"srv.py changed", "pkg/ changed", "later.js was added"} {
		got := was[i].Changes(pin([]Program{script, module, missing}[i]))
		if diff := cmp.Diff([]string{want}, got); diff != "" {
			t.Errorf("changes (-want +got):\n%s", diff)
		}
	}
	if err := os.Remove(filepath.Join(root, "srv.py")); err != nil {
		t.Fatal(err)
	}
	if got := was[0].Changes(pin(script)); !slices.Equal(got, []string{"srv.py was deleted or is no longer named"}) {
		t.Errorf("deleted: %v", got)
	}
}

// TestPinSymlinkedRoot: a project reached through a symlink pins the same
// names, a missing script included (so creating it is still seen).
func TestPinSymlinkedRoot(t *testing.T) {
	root := pinProject(t, map[string]string{"srv.py": "v1"})
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	pins, err := PinProgram(link, Program{Argv: []string{"python3", "srv.py", "gone.py"}, Dir: link})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"srv.py"}, pinKeys(pins)); diff != "" {
		t.Errorf("pins (-want +got):\n%s", diff)
	}
	pins, _ = PinProgram(link, Program{Shell: "node later.js", Dir: link})
	if diff := cmp.Diff([]string{"later.js (absent)"}, pinKeys(pins)); diff != "" {
		t.Errorf("pins (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string(nil), pins.Files()); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
}

// BenchmarkPinProgram: the cost a session start (and every launch of a
// project server or hook) pays to check one entry: an MCP server's
// `python3 srv.py` with a 20 KB script, and a hook's shell command.
func BenchmarkPinProgram(b *testing.B) {
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "srv.py"), []byte(strings.Repeat("x = 1\n", 3400)), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hook.sh"), []byte("echo hi\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct {
		name string
		prog Program
	}{
		{"server", Program{Argv: []string{"python3", "-u", "srv.py", "--port", "1"}}},
		{"hook", Program{Shell: `cat > /dev/null; bash "$CLAUDE_PROJECT_DIR/hook.sh" || exit 2`, Env: map[string]string{"CLAUDE_PROJECT_DIR": root}}},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := PinProgram(root, p.prog); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

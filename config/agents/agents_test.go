package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestParseForeignFormats: Claude Code's and opencode's agent files load
// unchanged, their tool and model names mapped to Odin's, a Bash(...)
// spec turned into a command pattern.
func TestParseForeignFormats(t *testing.T) {
	dir := t.TempDir()
	claude := filepath.Join(dir, "reviewer.md")
	writeFile(t, claude, "---\r\nname: reviewer\r\ndescription: Reviews.\r\ntools: Read, Grep, Bash(git diff:*)\r\nmodel: sonnet\r\npermissionMode: plan\r\ntimeout: 90s\r\n---\r\nBe strict.\r\n")
	got, err := Parse(claude, ".claude/agents/reviewer.md")
	if err != nil {
		t.Fatal(err)
	}
	want := &File{Name: "reviewer", Description: "Reviews.", Prompt: "Be strict.", Source: ".claude/agents/reviewer.md",
		Tools: []string{"ReadFile", "Grep", "ExecuteCommand"}, CommandPatterns: got.CommandPatterns, Model: "main",
		PermissionMode: "plan", Timeout: 90 * time.Second,
		// Lines of the file as written (CRLF and all), for the roster's errors.
		Lines: map[string]int{"name": 2, "description": 3, "tools": 4, "model": 5, "permissionMode": 6, "timeout": 7, "prompt": 9}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Parse (-want +got):\n%s", d)
	}
	if len(got.CommandPatterns) != 1 || !strings.Contains(got.CommandPatterns[0], "git diff") {
		t.Errorf("CommandPatterns = %q, want the git diff pattern", got.CommandPatterns)
	}

	opencode := filepath.Join(dir, "docs.md")
	writeFile(t, opencode, "---\ndescription: Writes docs.\ntools:\n  write: true\n  bash: false\nmodel: haiku\n---\nWrite docs.\n")
	got, err = Parse(opencode, "docs.md")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "docs" || !cmp.Equal(got.Tools, []string{"*"}) || !cmp.Equal(got.DisallowedTools, []string{"ExecuteCommand"}) || got.Model != "small" {
		t.Errorf("opencode file: name %q tools %q disallowed %q model %q", got.Name, got.Tools, got.DisallowedTools, got.Model)
	}
}

// TestParseErrors: each broken file is an *Error naming the file, the
// agent and the key.
func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"no front matter": "just text\n",
		"unterminated":    "---\ndescription: d\n",
		"unknown key":     "---\ndescription: d\nfoo: 1\n---\nbody\n",
		"bad name":        "---\nname: Bad Name\ndescription: d\n---\nbody\n",
		"no description":  "---\nname: x\n---\nbody\n",
		"no prompt":       "---\ndescription: d\n---\n\n",
		"bad timeout":     "---\ndescription: d\ntimeout: soon\n---\nbody\n",
		"negative budget": "---\ndescription: d\nbudget:\n  tokens: -1\n---\nbody\n",
		// The first line of the front matter is the file's line 2; yaml v3
		// alone leaves a fault there without a line.
		"syntax error first line": "---\ndescription: d: e\n---\nbody\n",
		"unclosed list":           "---\ndescription: d\ntools: [Read\n---\nbody\n",
		"wrong type":              "---\ndescription: d\nmax_turns: many\n---\nbody\n",
	}
	want := map[string]string{
		"no front matter": "x.md: x: missing YAML front matter",
		"unterminated":    "x.md: x: unterminated YAML front matter",
		"unknown key":     "x.md:3: x: front matter: field foo not found",
		"bad name":        `x.md:2: x: name: invalid agent name "Bad Name"`,
		// A key left out is placed at the opening "---"; the prompt at
		// the body's first line.
		"no description":          "x.md:1: x: description: required",
		"no prompt":               "x.md:4: x: prompt: the body",
		"bad timeout":             `x.md:3: x: timeout: invalid duration "soon"`,
		"negative budget":         "x.md:3: x: budget: limits must not be negative",
		"syntax error first line": "x.md:2: x: front matter: mapping values are not allowed in this context",
		"unclosed list":           "x.md:3: x: front matter: did not find expected ',' or ']'",
		"wrong type":              "x.md:3: x: front matter: cannot unmarshal !!str `many` into int",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.md")
			writeFile(t, path, text)
			_, err := Parse(path, "x.md")
			var fe *Error
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), want[name]) {
				t.Errorf("Parse: %v, want an *Error starting %q", err, want[name])
			}
		})
	}
}

// TestFilesAndUserFiles: a project file leading out of its folder is not
// read (a warning names it), a broken project file is an error, a broken
// user file only a warning; user files are marked.
func TestFilesAndUserFiles(t *testing.T) {
	root, outside, user := t.TempDir(), t.TempDir(), t.TempDir()
	dir := filepath.Join(root, ".odin", "agents")
	writeFile(t, filepath.Join(dir, "a.md"), "---\ndescription: d\n---\nbody\n")
	writeFile(t, filepath.Join(dir, "notes.txt"), "not an agent")
	writeFile(t, filepath.Join(outside, "secret.md"), "---\ndescription: d\n---\nsecret\n")
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "b.md")); err != nil {
		t.Fatal(err)
	}
	files, warnings, err := Files(root, []string{dir, filepath.Join(root, "missing")})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Name != "a" || files[0].Source != filepath.Join(".odin", "agents", "a.md") || files[0].User {
		t.Errorf("Files = %+v", files)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "b.md: leads outside") {
		t.Errorf("warnings = %q, want the escaping link", warnings)
	}
	writeFile(t, filepath.Join(dir, "c.md"), "no front matter")
	if _, _, err := Files(root, []string{dir}); err == nil {
		t.Error("a broken project agent file was not an error")
	}

	writeFile(t, filepath.Join(user, "u.md"), "---\ndescription: d\n---\nbody\n")
	writeFile(t, filepath.Join(user, "v.md"), "no front matter")
	ufiles, uwarn := UserFiles([]string{user})
	if len(ufiles) != 1 || ufiles[0].Name != "u" || !ufiles[0].User {
		t.Errorf("UserFiles = %+v", ufiles)
	}
	if len(uwarn) != 1 || !strings.HasSuffix(uwarn[0], "; left out") {
		t.Errorf("user warnings = %q", uwarn)
	}
}

package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/tools/tool"
)

// grepTree builds a small project in a git repository.
func grepTree(t *testing.T) *tool.Env {
	t.Helper()
	env := newRootEnv(t)
	for rel, content := range map[string]string{
		".git/HEAD":        "ref: refs/heads/main\n",
		".gitignore":       "ignored/\n*.gen.go\n",
		"main.go":          "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
		"util/util.go":     "package util\n\n// Hello says hello.\nfunc Hello() string {\n\treturn \"hello\"\n}\n",
		"util/util.gen.go": "package util // hello generated\n",
		"web/app.ts":       "export const hello = 1;\n",
		"web/app.tsx":      "export const Hello = () => null;\n",
		"ignored/x.go":     "hello\n",
		".hidden/h.go":     "hello\n",
		"bin.dat":          "hello\x00world\n",
		"README.md":        "# Hello\nline two\nline three\nhello again\n",
	} {
		writeTestFile(t, env.Root, rel, content)
	}
	return env
}

func TestGrep(t *testing.T) {
	env := grepTree(t)
	r := env.Root
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{
			name: "default mode lists files sorted by path",
			in:   map[string]any{"pattern": "hello"},
			want: r + "/README.md\n" + r + "/util/util.go\n" + r + "/web/app.ts\n",
		},
		{
			name: "content with line numbers by default",
			in:   map[string]any{"pattern": "Hello", "output_mode": "content"},
			want: r + "/README.md:1:# Hello\n" + r + "/main.go:4:\tprintln(\"Hello\")\n" + r + "/util/util.go:3:// Hello says hello.\n" + r + "/util/util.go:4:func Hello() string {\n" + r + "/web/app.tsx:1:export const Hello = () => null;\n",
		},
		{
			name: "content without line numbers",
			in:   map[string]any{"pattern": "^func", "output_mode": "content", "-n": false},
			want: r + "/main.go:func main() {\n" + r + "/util/util.go:func Hello() string {\n",
		},
		{
			name: "context",
			in:   map[string]any{"pattern": "three", "output_mode": "content", "-C": 1},
			want: r + "/README.md-2-line two\n" + r + "/README.md:3:line three\n" + r + "/README.md-4-hello again\n",
		},
		{
			name: "context across files and groups",
			in:   map[string]any{"pattern": "^package", "output_mode": "content", "-A": 1},
			want: r + "/main.go:1:package main\n" + r + "/main.go-2-\n--\n" + r + "/util/util.go:1:package util\n" + r + "/util/util.go-2-\n",
		},
		{
			name: "count, case-insensitive",
			in:   map[string]any{"pattern": "HELLO", "-i": true, "output_mode": "count"},
			want: r + "/README.md:2\n" + r + "/main.go:1\n" + r + "/util/util.go:3\n" + r + "/web/app.ts:1\n" + r + "/web/app.tsx:1\n",
		},
		{
			name: "glob with braces",
			in:   map[string]any{"pattern": "(?i)hello", "glob": "*.{ts,tsx}"},
			want: r + "/web/app.ts\n" + r + "/web/app.tsx\n",
		},
		{
			name: "negated glob",
			in:   map[string]any{"pattern": "hello", "glob": "!*.md"},
			want: r + "/util/util.go\n" + r + "/web/app.ts\n",
		},
		{
			name: "type",
			in:   map[string]any{"pattern": "hello", "-i": true, "type": "go"},
			want: r + "/main.go\n" + r + "/util/util.go\n",
		},
		{
			name: "relative path",
			in:   map[string]any{"pattern": "hello", "path": "util"},
			want: r + "/util/util.go\n",
		},
		{
			name: "explicit file, even an ignored one",
			in:   map[string]any{"pattern": "hello", "path": r + "/util/util.gen.go", "output_mode": "content"},
			want: r + "/util/util.gen.go:1:package util // hello generated\n",
		},
		{
			name: "multiline",
			in:   map[string]any{"pattern": `func main\(\) \{\n\s+println`, "multiline": true, "output_mode": "content"},
			want: r + "/main.go:3:func main() {\n" + r + "/main.go:4:\tprintln(\"Hello\")\n",
		},
		{
			name: "head_limit",
			in:   map[string]any{"pattern": "hello", "-i": true, "head_limit": 2},
			want: r + "/README.md\n" + r + "/main.go\n\n[3 more lines not shown (head_limit 2); narrow the search with path, glob, type or a more specific pattern]\n",
		},
	}
	tool := NewGrep()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, tool, env, tc.in)
			if res.IsError {
				t.Fatalf("error result: %s", res.Output)
			}
			if diff := cmp.Diff(tc.want, res.Output); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGrepErrors(t *testing.T) {
	env := grepTree(t)
	outside := t.TempDir()
	tests := []struct {
		name   string
		in     map[string]any
		want   string
		denied bool
	}{
		{"no match", map[string]any{"pattern": "zzzz-no-such-text"}, "No matches for", false},
		{"bad regex", map[string]any{"pattern": "a(b"}, "invalid pattern", false},
		{"newline without multiline", map[string]any{"pattern": `a\nb`}, "multiline", false},
		{"missing path", map[string]any{"pattern": "x", "path": filepath.Join(env.Root, "nope")}, "does not exist", false},
		{"path outside the project", map[string]any{"pattern": "x", "path": outside}, "outside the project", true},
		{"unknown type", map[string]any{"pattern": "x", "type": "golang"}, "unknown file type", false},
		{"bad glob", map[string]any{"pattern": "x", "glob": "[abc"}, "invalid glob", false},
		{"bad output mode", map[string]any{"pattern": "x", "output_mode": "lines"}, "invalid input", false},
		{"negative context", map[string]any{"pattern": "x", "-A": -1}, "invalid input", false},
		{"fractional context", map[string]any{"pattern": "x", "-B": 1.5}, "whole number", false},
		{"missing pattern", map[string]any{"path": env.Root}, "invalid input", false},
		{"unknown field", map[string]any{"pattern": "x", "recursive": true}, "invalid input", false},
	}
	tool := NewGrep()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, tool, env, tc.in)
			if !res.IsError || !strings.Contains(res.Output, tc.want) || res.Denied != tc.denied {
				t.Errorf("got IsError=%v Denied=%v %q; want an error containing %q (denied=%v)", res.IsError, res.Denied, res.Output, tc.want, tc.denied)
			}
		})
	}
}

func TestGrepRefusesSpecialFiles(t *testing.T) {
	env := newRootEnv(t)
	fifo := filepath.Join(env.Root, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	res := runTool(t, NewGrep(), env, map[string]any{"pattern": "x", "path": fifo})
	if !res.IsError || !strings.Contains(res.Output, "not a regular file") {
		t.Errorf("got IsError=%v %q, want a refusal", res.IsError, res.Output)
	}
}

func TestGrepOutputCap(t *testing.T) {
	env := newRootEnv(t)
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "match line %d with some padding text to make it longer\n", i)
	}
	writeTestFile(t, env.Root, "big.txt", b.String())
	writeTestFile(t, env.Root, "small.txt", "match\n")
	res := runTool(t, NewGrep(), env, map[string]any{"pattern": "match", "output_mode": "content"})
	if res.IsError {
		t.Fatal(res.Output)
	}
	if len(res.Output) > grepOutputCap+200 {
		t.Errorf("output is %d bytes, over the cap %d", len(res.Output), grepOutputCap)
	}
	if !strings.Contains(res.Output, "more lines not shown (the output size cap)") {
		t.Errorf("no truncation note in %q", res.Output[len(res.Output)-200:])
	}
	meta := res.Meta.(GrepMeta)
	if !meta.Truncated || meta.Lines != 5001 || meta.Shown >= meta.Lines {
		t.Errorf("meta = %+v, want truncated with 5001 lines", meta)
	}
	if !strings.HasPrefix(res.Output, env.Root+"/big.txt:1:match line 0 ") {
		t.Errorf("output starts %q", res.Output[:80])
	}
}

func TestSplitGlobs(t *testing.T) {
	tests := map[string][]string{
		"":                nil,
		"*.go":            {"*.go"},
		"*.ts  *.tsx":     {"*.ts", "*.tsx"},
		"*.{ts, tsx} !x/": {"*.{ts, tsx}", "!x/"},
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, splitGlobs(in)); diff != "" {
			t.Errorf("splitGlobs(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// seedSchema is a tool's input schema as seed 000 writes it: the property
// names and types the models are promised.
type seedSchema struct {
	Properties map[string]struct {
		Type string `json:"type"`
		Enum []any  `json:"enum,omitempty"`
	} `json:"properties"`
	Required             []string `json:"required"`
	AdditionalProperties *bool    `json:"additionalProperties"`
}

func checkSeedSchema(t *testing.T, tl tool.Tool, wantProps map[string]string, required []string) {
	t.Helper()
	var got seedSchema
	if err := json.Unmarshal(tl.Info().Schema, &got); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for name, p := range got.Properties {
		props[name] = p.Type
	}
	if diff := cmp.Diff(wantProps, props); diff != "" {
		t.Errorf("%s properties (-seed +got):\n%s", tl.Info().Name, diff)
	}
	slices.Sort(got.Required)
	if diff := cmp.Diff(required, got.Required); diff != "" {
		t.Errorf("%s required (-seed +got):\n%s", tl.Info().Name, diff)
	}
	if got.AdditionalProperties == nil || *got.AdditionalProperties {
		t.Errorf("%s allows additional properties", tl.Info().Name)
	}
	if tl.Info().Class != tool.ClassRead {
		t.Errorf("%s class = %s, want read", tl.Info().Name, tl.Info().Class)
	}
	// One sentence at least: the .md was embedded, not an empty file.
	if len(strings.TrimSpace(tl.Info().Description)) < 80 {
		t.Errorf("%s description looks empty: %q", tl.Info().Name, tl.Info().Description)
	}
}

func TestSearchToolSchemas(t *testing.T) {
	checkSeedSchema(t, NewGrep(), map[string]string{
		"pattern": "string", "path": "string", "glob": "string", "type": "string", "output_mode": "string",
		"-n": "boolean", "-i": "boolean", "-A": "number", "-B": "number", "-C": "number",
		"head_limit": "number", "multiline": "boolean",
	}, []string{"pattern"})
	checkSeedSchema(t, NewGlob(), map[string]string{"pattern": "string", "path": "string"}, []string{"pattern"})
	checkSeedSchema(t, NewLS(), map[string]string{"path": "string", "ignore": "array"}, []string{"path"})
	checkSeedSchema(t, NewTree(), map[string]string{"path": "string", "depth": "integer"}, nil)
	var grep seedSchema
	if err := json.Unmarshal(NewGrep().Info().Schema, &grep); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"content", "files_with_matches", "count"}, grep.Properties["output_mode"].Enum); diff != "" {
		t.Errorf("output_mode enum (-seed +got):\n%s", diff)
	}
	for _, name := range []string{"Grep", "Glob", "LS", "Tree"} {
		if _, err := os.Stat(strings.ToLower(name) + ".md"); err != nil {
			t.Errorf("%s has no description file: %v", name, err)
		}
	}
}

func TestGrepClipsLongLines(t *testing.T) {
	env := newRootEnv(t)
	long := strings.Repeat("é", 3000) + " needle " + strings.Repeat("x", 5000)
	writeTestFile(t, env.Root, "min.js", long+"\nshort needle\n")
	res := runTool(t, NewGrep(), env, map[string]any{"pattern": "needle", "output_mode": "content"})
	lines := strings.Split(strings.TrimSuffix(res.Output, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines: %q", len(lines), res.Output)
	}
	prefix := env.Root + "/min.js:1:"
	if !strings.HasPrefix(lines[0], prefix) || !strings.HasSuffix(lines[0], " more bytes on this line]") {
		t.Errorf("long line not clipped with a note: %.80q...%q", lines[0], lines[0][len(lines[0])-40:])
	}
	if len(lines[0]) > grepLineCap+60 || !utf8.ValidString(lines[0]) {
		t.Errorf("clipped line is %d bytes (valid UTF-8: %v)", len(lines[0]), utf8.ValidString(lines[0]))
	}
	if want := env.Root + "/min.js:2:short needle"; lines[1] != want {
		t.Errorf("second line = %q, want %q", lines[1], want)
	}
}

func TestGrepManyFilesKeepsFirstPaths(t *testing.T) {
	env := newRootEnv(t)
	line := strings.Repeat("needle ", 20) + "\n"
	for i := range 1500 {
		writeTestFile(t, env.Root, fmt.Sprintf("d%02d/f%04d.txt", i%13, i), strings.Repeat(line, 6))
	}
	res := runTool(t, NewGrep(), env, map[string]any{"pattern": "needle", "output_mode": "content"})
	meta := res.Meta.(GrepMeta)
	if meta.Files != 1500 || meta.Lines != 9000 || !meta.Truncated {
		t.Fatalf("meta = %+v, want 1500 files, 9000 lines, truncated", meta)
	}
	if want := env.Root + "/d00/f0000.txt:1:needle"; !strings.HasPrefix(res.Output, want) {
		t.Errorf("output starts %q, want %q", res.Output[:60], want)
	}
	if !strings.Contains(res.Output, fmt.Sprintf("[%d more lines not shown", 9000-meta.Shown)) {
		t.Errorf("missing or wrong truncation note: ...%q", res.Output[len(res.Output)-150:])
	}
}

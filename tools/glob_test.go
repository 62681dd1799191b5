package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGlob(t *testing.T) {
	env := newRootEnv(t)
	r := env.Root
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	files := []string{"a.go", "cmd/odin/main.go", "cmd/odin/main_test.go", "docs/guide.md", "ignored/x.go", ".hidden/h.go", "web/app.ts", "web/app.tsx", "b.go"}
	for i, rel := range files {
		p := writeTestFile(t, r, rel, "x\n")
		// Later files are newer, except b.go which ties with a.go.
		mt := base.Add(time.Duration(i) * time.Minute)
		if rel == "b.go" {
			mt = base
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, r, ".git/HEAD", "ref\n")
	writeTestFile(t, r, ".gitignore", "ignored/\n")
	tests := []struct {
		name string
		in   map[string]any
		want []string
	}{
		{"any depth, newest first, ties by path", map[string]any{"pattern": "*.go"}, []string{"cmd/odin/main_test.go", "cmd/odin/main.go", "a.go", "b.go"}},
		{"doublestar", map[string]any{"pattern": "**/*.go"}, []string{"cmd/odin/main_test.go", "cmd/odin/main.go", "a.go", "b.go"}},
		{"anchored with a slash", map[string]any{"pattern": "cmd/*/*_test.go"}, []string{"cmd/odin/main_test.go"}},
		{"braces", map[string]any{"pattern": "web/*.{ts,tsx}"}, []string{"web/app.tsx", "web/app.ts"}},
		{"path narrows the search", map[string]any{"pattern": "*.go", "path": r + "/cmd"}, []string{"cmd/odin/main_test.go", "cmd/odin/main.go"}},
		{"relative path", map[string]any{"pattern": "*", "path": "docs"}, []string{"docs/guide.md"}},
		{"undefined path means the root", map[string]any{"pattern": "*.md", "path": "undefined"}, []string{"docs/guide.md"}},
		{"absolute pattern inside the root", map[string]any{"pattern": r + "/web/*.ts"}, []string{"web/app.ts"}},
		{"hidden files only when named by the glob", map[string]any{"pattern": "h.go"}, nil},
	}
	tool := NewGlob()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, tool, env, tc.in)
			if tc.want == nil {
				if !res.IsError || !strings.Contains(res.Output, "No files found") {
					t.Errorf("want no files, got %q", res.Output)
				}
				return
			}
			if res.IsError {
				t.Fatalf("error result: %s", res.Output)
			}
			var want strings.Builder
			for _, w := range tc.want {
				want.WriteString(filepath.Join(r, w) + "\n")
			}
			if diff := cmp.Diff(want.String(), res.Output); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGlobCap(t *testing.T) {
	env := newRootEnv(t)
	for i := range globLimit + 5 {
		writeTestFile(t, env.Root, fmt.Sprintf("f%03d.txt", i), "x")
	}
	res := runTool(t, NewGlob(), env, map[string]any{"pattern": "*.txt"})
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	if len(lines) != globLimit+2 || !strings.Contains(lines[len(lines)-1], "5 more files not shown (105 matched") {
		t.Errorf("got %d lines ending %q", len(lines), lines[len(lines)-1])
	}
	meta := res.Meta.(GlobMeta)
	if meta.Total != globLimit+5 || !meta.Truncated || len(meta.Files) != globLimit {
		t.Errorf("meta = total %d truncated %v files %d", meta.Total, meta.Truncated, len(meta.Files))
	}
}

func TestGlobErrors(t *testing.T) {
	env := newRootEnv(t)
	file := writeTestFile(t, env.Root, "a.go", "x")
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"empty pattern", map[string]any{"pattern": " "}, "pattern is empty"},
		{"bad pattern", map[string]any{"pattern": "[abc"}, "invalid pattern"},
		{"path is a file", map[string]any{"pattern": "*", "path": file}, "is a file"},
		{"missing path", map[string]any{"pattern": "*", "path": env.Root + "/nope"}, "does not exist"},
		{"absolute pattern elsewhere", map[string]any{"pattern": "/etc/*.conf"}, "outside"},
		{"no match", map[string]any{"pattern": "*.rs"}, "No files found"},
		{"missing pattern", map[string]any{}, "invalid input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, NewGlob(), env, tc.in)
			if !res.IsError || !strings.Contains(res.Output, tc.want) {
				t.Errorf("got IsError=%v %q, want an error containing %q", res.IsError, res.Output, tc.want)
			}
		})
	}
}

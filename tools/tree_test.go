package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTree(t *testing.T) {
	env := newRootEnv(t)
	r := env.Root
	for _, rel := range []string{"go.mod", "cmd/odin/main.go", "internal/a/b/c/deep.go", "internal/a/x.go", "README.md", ".hidden/x", "build/out.bin", ".git/HEAD"} {
		writeTestFile(t, r, rel, "x")
	}
	writeTestFile(t, r, ".gitignore", "build/\n")
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"default depth 3", map[string]any{},
			r + "/\n  cmd/\n    odin/\n      main.go\n  internal/\n    a/\n      b/\n      x.go\n  README.md\n  go.mod\n\n5 directories, 4 files\n"},
		{"depth 1", map[string]any{"depth": 1},
			r + "/\n  cmd/\n  internal/\n  README.md\n  go.mod\n\n2 directories, 2 files\n"},
		{"subdirectory, relative", map[string]any{"path": "internal", "depth": 5},
			r + "/internal/\n  a/\n    b/\n      c/\n        deep.go\n    x.go\n\n3 directories, 2 files\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, NewTree(), env, tc.in)
			if res.IsError {
				t.Fatal(res.Output)
			}
			if diff := cmp.Diff(tc.want, res.Output); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTreeCapKeepsShallowEntries(t *testing.T) {
	env := newRootEnv(t)
	for i := range 30 {
		for j := range 20 {
			writeTestFile(t, env.Root, fmt.Sprintf("d%02d/f%02d", i, j), "")
		}
	}
	res := runTool(t, NewTree(), env, map[string]any{})
	meta := res.Meta.(TreeMeta)
	if !meta.Truncated || meta.Shown != treeLimit || meta.Dirs != 30 || meta.Files != 600 {
		t.Fatalf("meta = %+v", meta)
	}
	for i := range 30 {
		if !strings.Contains(res.Output, fmt.Sprintf("\n  d%02d/\n", i)) {
			t.Errorf("top-level directory d%02d missing after the cap", i)
		}
	}
	if !strings.Contains(res.Output, "130 entries not shown") {
		t.Errorf("no cap note: %q", res.Output[len(res.Output)-150:])
	}
}

func TestTreeErrors(t *testing.T) {
	env := newRootEnv(t)
	file := writeTestFile(t, env.Root, "a.go", "x")
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"file", map[string]any{"path": file}, "is a file"},
		{"missing", map[string]any{"path": "nope"}, "does not exist"},
		{"depth too big", map[string]any{"depth": 99}, "invalid input"},
		{"outside", map[string]any{"path": t.TempDir()}, "outside the project"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, NewTree(), env, tc.in)
			if !res.IsError || !strings.Contains(res.Output, tc.want) {
				t.Errorf("got IsError=%v %q, want an error containing %q", res.IsError, res.Output, tc.want)
			}
		})
	}
}

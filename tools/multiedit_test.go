package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMultiEdit(t *testing.T) {
	const src = "package p\n\nfunc A() int { return 1 }\n\nfunc B() int { return 2 }\n"
	tests := []struct {
		name     string
		file     string
		edits    []MultiEditItem
		want     string
		isError  bool
		wantFile string
	}{
		{name: "edits in order", file: src,
			edits: []MultiEditItem{
				{OldString: "func A()", NewString: "func Alpha()"},
				{OldString: "return 2", NewString: "return 20"},
			},
			want: "applied 2 edits, 2 replacements", wantFile: "package p\n\nfunc Alpha() int { return 1 }\n\nfunc B() int { return 20 }\n"},
		{name: "later edit sees earlier result", file: src,
			edits: []MultiEditItem{
				{OldString: "return 1", NewString: "return x"},
				{OldString: "return x", NewString: "return 42"},
			},
			want: "applied 2 edits", wantFile: strings.Replace(src, "return 1", "return 42", 1)},
		{name: "replace_all inside a batch", file: src,
			edits: []MultiEditItem{{OldString: "int", NewString: "int64", ReplaceAll: true}},
			want:  "applied 1 edit, 2 replacements", wantFile: strings.ReplaceAll(src, "int", "int64")},
		{name: "failing edit rolls back everything", file: src,
			edits: []MultiEditItem{
				{OldString: "func A()", NewString: "func Alpha()"},
				{OldString: "func C()", NewString: "func Gamma()"},
			},
			want: "edit 2 of 2 (edits[1]) failed: old_string not found", isError: true, wantFile: src},
		{name: "ambiguous edit names its index", file: src,
			edits: []MultiEditItem{
				{OldString: "package p", NewString: "package q"},
				{OldString: "func A", NewString: "func AA"},
				{OldString: "int", NewString: "uint"},
			},
			want: "edit 3 of 3 (edits[2]) failed: found 2 matches", isError: true, wantFile: src},
		{name: "identical strings", file: src,
			edits: []MultiEditItem{{OldString: "B", NewString: "B"}},
			want:  "edit 1 of 1 (edits[0]) failed: old_string and new_string are identical", isError: true, wantFile: src},
		{name: "empty old_string", file: src,
			edits: []MultiEditItem{{OldString: "", NewString: "x"}},
			want:  "old_string is empty", isError: true, wantFile: src},
		{name: "edits that cancel out", file: src,
			edits: []MultiEditItem{{OldString: "A", NewString: "Z"}, {OldString: "Z", NewString: "A"}},
			want:  "unchanged", isError: true, wantFile: src},
		{name: "crlf and final newline kept", file: "a\r\nb\r\nc\r\n",
			edits: []MultiEditItem{{OldString: "a\nb", NewString: "x\ny"}, {OldString: "c\n", NewString: "z"}},
			want:  "applied 2 edits", wantFile: "x\r\ny\r\nz\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newRootEnv(t)
			p := writeTestFile(t, env.Root, "p.go", tt.file)
			before, _ := os.Stat(p)
			readFirst(t, env, p)
			res := runTool(t, NewMultiEdit(), env, MultiEditInput{FilePath: p, Edits: tt.edits})
			if res.IsError != tt.isError || !strings.Contains(res.Output, tt.want) {
				t.Errorf("result: IsError %v, output:\n%s\nwant IsError %v and %q", res.IsError, res.Output, tt.isError, tt.want)
			}
			got, _ := os.ReadFile(p)
			if !bytes.Equal(got, []byte(tt.wantFile)) {
				t.Errorf("file = %q, want %q", got, tt.wantFile)
			}
			if tt.isError {
				// Rolled back means untouched: same bytes and not even rewritten.
				after, _ := os.Stat(p)
				if !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
					t.Error("a failed batch rewrote the file")
				}
			}
			if left := tempLeftovers(t, env.Root); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestMultiEditPreconditions(t *testing.T) {
	env := newRootEnv(t)
	missing := filepath.Join(env.Root, "new.go")
	one := []MultiEditItem{{OldString: "", NewString: "package p\n"}}
	res := runTool(t, NewMultiEdit(), env, MultiEditInput{FilePath: missing, Edits: one})
	if !res.IsError || !strings.Contains(res.Output, "only changes existing files") {
		t.Errorf("missing file = %+v", res)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("MultiEditTool created a file")
	}

	p := writeTestFile(t, env.Root, "p.go", "package p\n")
	res = runTool(t, NewMultiEdit(), env, MultiEditInput{FilePath: p, Edits: []MultiEditItem{{OldString: "p", NewString: "q"}}})
	if !res.IsError || !strings.Contains(res.Output, "read the file first") {
		t.Errorf("unread file = %+v", res)
	}

	// Schema: edits must hold at least one item.
	res, err := NewMultiEdit().Run(t.Context(), env, mustJSON(t, map[string]any{"file_path": p, "edits": []any{}}))
	if err != nil || !res.IsError || !strings.Contains(res.Output, "minItems") {
		t.Errorf("empty edits = %+v, %v", res, err)
	}
}

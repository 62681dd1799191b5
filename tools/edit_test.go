package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/tools/tool"
)

func TestEditTool(t *testing.T) {
	tests := []struct {
		name     string
		file     string // initial content
		in       EditToolInput
		noRead   bool
		want     string // output substring
		isError  bool
		wantFile string
	}{
		{name: "single replacement", file: "a\nb\nc\n",
			in:   EditToolInput{OldString: "b", NewString: "B"},
			want: "replaced 1 occurrence (+1 -1 lines)", wantFile: "a\nB\nc\n"},
		{name: "diff shown", file: "a\nb\nc\n",
			in:   EditToolInput{OldString: "b\n", NewString: "b2\n"},
			want: "-b\n+b2\n", wantFile: "a\nb2\nc\n"},
		{name: "multi-line replacement", file: "func f() {\n\treturn 1\n}\n",
			in:   EditToolInput{OldString: "\treturn 1\n}", NewString: "\tx := 1\n\treturn x\n}"},
			want: "(+2 -1 lines)", wantFile: "func f() {\n\tx := 1\n\treturn x\n}\n"},
		{name: "not read first", file: "a\n", noRead: true,
			in:   EditToolInput{OldString: "a", NewString: "b"},
			want: "read the file first with ReadFile", isError: true, wantFile: "a\n"},
		{name: "identical strings", file: "a\n",
			in:   EditToolInput{OldString: "a", NewString: "a"},
			want: "identical", isError: true, wantFile: "a\n"},
		{name: "not found", file: "alpha\n",
			in:   EditToolInput{OldString: "beta", NewString: "gamma"},
			want: "old_string not found — it must match the file exactly, including whitespace and indentation", isError: true, wantFile: "alpha\n"},
		{name: "not found: indentation hint", file: "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			in:   EditToolInput{OldString: "    if x {\n        y()", NewString: "if z {"},
			want: "line 2", isError: true, wantFile: "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n"},
		{name: "several matches", file: "x=1\ny=2\nx=1\nx=1\n",
			in:   EditToolInput{OldString: "x=1", NewString: "x=3"},
			want: "found 3 matches of old_string (at lines 1, 3, 4): add surrounding context to make it unique, or set replace_all", isError: true,
			wantFile: "x=1\ny=2\nx=1\nx=1\n"},
		{name: "replace_all", file: "x=1\ny=2\nx=1\nx=1\n",
			in:   EditToolInput{OldString: "x=1", NewString: "x=3", ReplaceAll: true},
			want: "replaced 3 occurrences", wantFile: "x=3\ny=2\nx=3\nx=3\n"},
		{name: "crlf kept", file: "one\r\ntwo\r\nthree\r\n",
			in:   EditToolInput{OldString: "one\ntwo", NewString: "uno\ndos\ndos bis"},
			want: "Edited", wantFile: "uno\r\ndos\r\ndos bis\r\nthree\r\n"},
		{name: "crlf: model sends CRLF itself", file: "one\r\ntwo\r\n",
			in:   EditToolInput{OldString: "one\r\n", NewString: "1\r\n"},
			want: "Edited", wantFile: "1\r\ntwo\r\n"},
		{name: "final newline kept when the model drops it", file: "a\nb\n",
			in:   EditToolInput{OldString: "b\n", NewString: "c"},
			want: "Edited", wantFile: "a\nc\n"},
		{name: "final crlf kept", file: "a\r\nb\r\n",
			in:   EditToolInput{OldString: "b\n", NewString: "c"},
			want: "Edited", wantFile: "a\r\nc\r\n"},
		{name: "missing final newline kept", file: "a\nb",
			in:   EditToolInput{OldString: "b", NewString: "c\n"},
			want: "Edited", wantFile: "a\nc"},
		{name: "deleting text", file: "keep\ndrop\nkeep2\n",
			in:   EditToolInput{OldString: "drop\n", NewString: ""},
			want: "(+0 -1 lines)", wantFile: "keep\nkeep2\n"},
		{name: "empty old_string on a non-empty file", file: "a\n",
			in:   EditToolInput{OldString: "", NewString: "b"},
			want: "old_string is empty", isError: true, wantFile: "a\n"},
		{name: "empty old_string fills an empty file", file: "",
			in:   EditToolInput{OldString: "", NewString: "hello\n"},
			want: "Edited", wantFile: "hello\n"},
		{name: "only the final newline would change", file: "a\nb\n",
			in:   EditToolInput{OldString: "b\n", NewString: "b"},
			want: "unchanged", isError: true, wantFile: "a\nb\n"},
		{name: "not UTF-8 text", file: "caf\xe9\n",
			in:     EditToolInput{OldString: "caf", NewString: "bar"},
			noRead: true, // ReadFile refuses it; record the stamp by hand below
			want:   "not UTF-8 text", isError: true, wantFile: "caf\xe9\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newRootEnv(t)
			p := writeTestFile(t, env.Root, "f.txt", tt.file)
			if !tt.noRead {
				readFirst(t, env, p)
			} else if tt.name == "not UTF-8 text" {
				info, _ := os.Stat(p)
				env.Reads.Record(p, tool.StampOf([]byte(tt.file), info.ModTime()))
			}
			tt.in.FilePath = p
			res := runTool(t, NewEditTool(), env, tt.in)
			if res.IsError != tt.isError || !strings.Contains(res.Output, tt.want) {
				t.Errorf("result = IsError %v, output:\n%s\nwant IsError %v and %q", res.IsError, res.Output, tt.isError, tt.want)
			}
			if got := fileContent(t, p); got != tt.wantFile {
				t.Errorf("file = %q, want %q", got, tt.wantFile)
			}
			if !tt.isError {
				if d := cmp.Diff([]string{p}, res.Files); d != "" {
					t.Errorf("Files (-want +got):\n%s", d)
				}
			} else if len(res.Files) != 0 {
				t.Errorf("Files set on error: %v", res.Files)
			}
			if left := tempLeftovers(t, env.Root); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestEditToolFileLifecycle(t *testing.T) {
	env := newRootEnv(t)
	edit := NewEditTool()
	p := filepath.Join(env.Root, "pkg", "new.go")

	res := runTool(t, edit, env, EditToolInput{FilePath: p, OldString: "x", NewString: "y"})
	if !res.IsError || !strings.Contains(res.Output, "file does not exist") {
		t.Fatalf("missing file = %+v", res)
	}
	res = runTool(t, edit, env, EditToolInput{FilePath: p, OldString: "", NewString: "package pkg\n"})
	if res.IsError || !strings.Contains(res.Output, "Created") {
		t.Fatalf("create with empty old_string = %+v", res)
	}
	// Consecutive edits need no re-read: each records the new stamp.
	for i, e := range []EditToolInput{
		{OldString: "package pkg\n", NewString: "package pkg\n\nvar A = 1\n"},
		{OldString: "A = 1", NewString: "A = 2"},
	} {
		e.FilePath = p
		if res := runTool(t, edit, env, e); res.IsError {
			t.Fatalf("edit %d: %s", i, res.Output)
		}
	}
	if got := fileContent(t, p); got != "package pkg\n\nvar A = 2\n" {
		t.Errorf("content = %q", got)
	}
	info, _ := os.Stat(p)
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v", info.Mode().Perm())
	}

	// Someone else changes the file: the next edit must refuse.
	os.WriteFile(p, []byte("package pkg\n\nvar A = 3\n"), 0o644)
	res = runTool(t, edit, env, EditToolInput{FilePath: p, OldString: "A = 3", NewString: "A = 4"})
	if !res.IsError || !strings.Contains(res.Output, "changed on disk since you read it; read it again") {
		t.Errorf("stale edit = %+v", res)
	}
	if got := fileContent(t, p); got != "package pkg\n\nvar A = 3\n" {
		t.Errorf("stale edit changed the file: %q", got)
	}
}

func TestEditToolModeAndGuard(t *testing.T) {
	env := newRootEnv(t)
	p := writeTestFile(t, env.Root, "run.sh", "echo a\n")
	os.Chmod(p, 0o750)
	readFirst(t, env, p)
	if res := runTool(t, NewEditTool(), env, EditToolInput{FilePath: p, OldString: "a", NewString: "b"}); res.IsError {
		t.Fatal(res.Output)
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v, want 0750", info.Mode().Perm())
	}

	outside := writeTestFile(t, t.TempDir(), "x.txt", "a\n")
	res := runTool(t, NewEditTool(), env, EditToolInput{FilePath: outside, OldString: "a", NewString: "b"})
	if !res.IsError || !res.Denied {
		t.Errorf("edit outside the root = %+v", res)
	}
	res = runTool(t, NewEditTool(), env, EditToolInput{FilePath: "run.sh", OldString: "a", NewString: "b"})
	if !res.IsError || !strings.Contains(res.Output, "must be an absolute path") {
		t.Errorf("relative path = %+v", res)
	}
	raw := json.RawMessage("{\"file_path\":\"" + p + "\",\"old_string\":\"b\",\"new_string\":\"\xff\"}")
	res, err := NewEditTool().Run(t.Context(), env, raw)
	if err != nil || !res.IsError || !strings.Contains(res.Output, "not valid UTF-8") {
		t.Errorf("invalid UTF-8 = %+v, %v", res, err)
	}
}

func TestApplyEditHints(t *testing.T) {
	content := "a\n  b\n"
	_, _, err := applyEdit(content, editSpec{Old: "b ", New: "c"})
	if err == nil || !strings.Contains(err.Error(), "Without its leading/trailing whitespace it occurs at line 2") {
		t.Errorf("err = %v", err)
	}
	many := strings.Repeat("x\n", 12)
	_, _, err = applyEdit(many, editSpec{Old: "x", New: "y"})
	if err == nil || !strings.Contains(err.Error(), "found 12 matches of old_string (at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …)") {
		t.Errorf("err = %v", err)
	}
}

func BenchmarkEditTool(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	env := &tool.Env{Root: root, Reads: tool.NewReadState(), Guard: withinGuard{root: root}}
	p := filepath.Join(root, "f.go")
	os.WriteFile(p, []byte(strings.Repeat("some typical line of source code\n", 3000)+"value = 0\n"), 0o644)
	readFirst(b, env, p)
	tool := NewEditTool()
	old := "value = 0"
	for i := 1; b.Loop(); i++ {
		next := "value = " + strings.Repeat("1", i%7+1)
		if next == old {
			next += "2"
		}
		res, err := tool.Run(b.Context(), env, mustJSON(b, EditToolInput{FilePath: p, OldString: old, NewString: next}))
		if err != nil || res.IsError {
			b.Fatal(res.Output, err)
		}
		old = next
	}
}

// Two agents that both read a file and then edit it at the same time: with
// the session's path locks exactly one edit lands and the other is told the
// file changed since it read it; no update is lost.
func TestConcurrentEditsAreSerialized(t *testing.T) {
	base := newRootEnv(t)
	locks := &tool.PathLocks{}
	for round := range 30 {
		p := filepath.Join(base.Root, fmt.Sprintf("shared%d.txt", round))
		if err := os.WriteFile(p, []byte("count = 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		envs := []*tool.Env{
			{Root: base.Root, Agent: "a", Reads: tool.NewReadState(), Guard: base.Guard, Locks: locks},
			{Root: base.Root, Agent: "b", Reads: tool.NewReadState(), Guard: base.Guard, Locks: locks},
		}
		for _, e := range envs {
			readFirst(t, e, p)
		}
		results := make([]tool.Result, 2)
		var wg sync.WaitGroup
		for i, e := range envs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = runTool(t, NewEditTool(), e, EditToolInput{FilePath: p, OldString: "count = 0", NewString: fmt.Sprintf("count = %d", i+1)})
			}()
		}
		wg.Wait()
		ok := 0
		for _, r := range results {
			if !r.IsError {
				ok++
			} else if !strings.Contains(r.Output, "changed on disk since you read it") {
				t.Fatalf("round %d: unexpected failure: %s", round, r.Output)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d edits succeeded, want exactly 1: %+v", round, ok, results)
		}
	}
}

// An edit's result names the file once, in its first line, and shows the
// change from its first hunk: the diff's own file lines would name it
// twice more in every later request of the conversation.
func TestEditResultNamesTheFileOnce(t *testing.T) {
	env := newRootEnv(t)
	p := filepath.Join(env.Root, "conf.txt")
	edit := NewEditTool()
	if res := runTool(t, edit, env, EditToolInput{FilePath: p, OldString: "", NewString: "port = 80\ndebug = on\n"}); res.IsError {
		t.Fatal(res.Output)
	}
	res := runTool(t, edit, env, EditToolInput{FilePath: p, OldString: "port = 80", NewString: "port = 8080"})
	if res.IsError {
		t.Fatal(res.Output)
	}
	want := "Edited " + p + ": replaced 1 occurrence (+1 -1 lines).\n@@ -1,2 +1,2 @@\n-port = 80\n+port = 8080\n debug = on"
	if res.Output != want {
		t.Errorf("result = %q\nwant     %q", res.Output, want)
	}
}

package tools

import (
	"encoding/json"
	"errors"
	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/tools/tool"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// readFirst runs ReadFile on p so write tools accept it.
func readFirst(t testing.TB, env *tool.Env, p string) {
	t.Helper()
	if res := runTool(t, NewReadFile(), env, ReadFileInput{FilePath: p}); res.IsError {
		t.Fatalf("ReadFile %s: %s", p, res.Output)
	}
}

func fileContent(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tempLeftovers lists the temporary files atomic writes could leave.
func tempLeftovers(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".odin-") {
			left = append(left, p)
		}
		return nil
	})
	return left
}

func TestWriteFileCreate(t *testing.T) {
	env := newRootEnv(t)
	var checkpointed []string
	env.BeforeWrite = func(p string) error {
		checkpointed = append(checkpointed, p)
		if _, err := os.Stat(p); err == nil && len(checkpointed) == 1 {
			t.Errorf("BeforeWrite called after %s was created", p)
		}
		return nil
	}
	p := filepath.Join(env.Root, "a", "b", "new.go")
	res := runTool(t, NewWriteFile(), env, WriteFileInput{FilePath: p, Content: "package b\n\nfunc F() {}\n"})
	if res.IsError {
		t.Fatalf("error: %s", res.Output)
	}
	if d := cmp.Diff("Created "+p+": 3 lines, 23 bytes.", res.Output); d != "" {
		t.Errorf("output (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{p}, res.Files); d != "" {
		t.Errorf("Files (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{p}, checkpointed); d != "" {
		t.Errorf("checkpointed (-want +got):\n%s", d)
	}
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("stat = %v, %v; want mode 0644", info, err)
	}
	if got := fileContent(t, p); got != "package b\n\nfunc F() {}\n" {
		t.Errorf("content = %q", got)
	}
	// The writer knows the content: a second write needs no fresh read.
	res = runTool(t, NewWriteFile(), env, WriteFileInput{FilePath: p, Content: "package b\n"})
	if res.IsError || !strings.Contains(res.Output, "(+0 -2 lines)") {
		t.Errorf("second write = %+v", res)
	}
	if d := cmp.Diff([]string{p, p}, checkpointed); d != "" {
		t.Errorf("checkpointed (-want +got):\n%s", d)
	}
	if left := tempLeftovers(t, env.Root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWriteFileOverwrite(t *testing.T) {
	tests := []struct {
		name     string
		mode     fs.FileMode
		read     bool
		change   func(t *testing.T, p string) // after the read
		content  string
		want     string // output substring
		isError  bool
		wantFile string // content on disk afterwards
	}{
		{name: "not read first", mode: 0o644, content: "new\n",
			want: "read the file first with ReadFile", isError: true, wantFile: "old\n"},
		{name: "read then write", mode: 0o644, read: true, content: "new\nline\n",
			want: "Updated", wantFile: "new\nline\n"},
		{name: "mode kept", mode: 0o755, read: true, content: "#!/bin/sh\n", want: "Updated", wantFile: "#!/bin/sh\n"},
		{name: "private mode kept", mode: 0o600, read: true, content: "secret\n", want: "Updated", wantFile: "secret\n"},
		{name: "changed since read", mode: 0o644, read: true,
			change:  func(t *testing.T, p string) { os.WriteFile(p, []byte("other\n"), 0o644) },
			content: "new\n", want: "changed on disk since you read it", isError: true, wantFile: "other\n"},
		{name: "changed with the same size and mtime", mode: 0o644, read: true,
			change: func(t *testing.T, p string) {
				info, _ := os.Stat(p)
				os.WriteFile(p, []byte("OLD\n"), 0o644)
				os.Chtimes(p, info.ModTime(), info.ModTime())
			},
			content: "new\n", want: "changed on disk since you read it", isError: true, wantFile: "OLD\n"},
		{name: "same content", mode: 0o644, read: true, content: "old\n",
			want: "already has exactly this content", wantFile: "old\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newRootEnv(t)
			p := writeTestFile(t, env.Root, "f.txt", "old\n")
			os.Chmod(p, tt.mode)
			if tt.read {
				readFirst(t, env, p)
			}
			if tt.change != nil {
				tt.change(t, p)
			}
			res := runTool(t, NewWriteFile(), env, WriteFileInput{FilePath: p, Content: tt.content})
			if res.IsError != tt.isError || !strings.Contains(res.Output, tt.want) {
				t.Errorf("result = %+v; want IsError %v and %q", res, tt.isError, tt.want)
			}
			if got := fileContent(t, p); got != tt.wantFile {
				t.Errorf("file = %q, want %q", got, tt.wantFile)
			}
			info, _ := os.Stat(p)
			if info.Mode().Perm() != tt.mode {
				t.Errorf("mode = %v, want %v", info.Mode().Perm(), tt.mode)
			}
			wantFiles := tt.wantFile != "old\n" && !tt.isError
			if (len(res.Files) == 1) != wantFiles {
				t.Errorf("Files = %v", res.Files)
			}
		})
	}
}

func TestWriteFileBadInput(t *testing.T) {
	env := newRootEnv(t)
	dir := filepath.Join(env.Root, "d")
	os.Mkdir(dir, 0o755)
	outside := filepath.Join(t.TempDir(), "x.txt")
	tests := []struct {
		name   string
		raw    string
		want   string
		denied bool
	}{
		{"relative path", `{"file_path":"x.txt","content":"a"}`, "must be an absolute path", false},
		{"missing content", `{"file_path":"` + filepath.Join(env.Root, "x") + `"}`, "content", false},
		{"directory", `{"file_path":"` + dir + `","content":"a"}`, "is a directory", false},
		{"outside the project", `{"file_path":"` + outside + `","content":"a"}`, "permission denied", true},
		{"invalid utf-8 byte", `{"file_path":"` + filepath.Join(env.Root, "x") + "\",\"content\":\"caf\xe9\"}", "not valid UTF-8", false},
		{"lone surrogate escape", `{"file_path":"` + filepath.Join(env.Root, "x") + `","content":"a\ud800b"}`, "not valid UTF-8", false},
		{"lone low surrogate", `{"file_path":"` + filepath.Join(env.Root, "x") + `","content":"\udc00"}`, "not valid UTF-8", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := NewWriteFile().Run(t.Context(), env, json.RawMessage(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(res.Output, tt.want) || res.Denied != tt.denied {
				t.Errorf("result = %+v; want an error with %q", res, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(env.Root, "x")); err == nil {
		t.Error("a rejected write created the file")
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("a denied write created the file")
	}
	// An escaped surrogate pair and an escaped backslash are fine.
	p := filepath.Join(env.Root, "emoji.txt")
	res, err := NewWriteFile().Run(t.Context(), env, json.RawMessage(`{"file_path":"`+p+`","content":"\ud83d\ude00 \\ud800"}`))
	if err != nil || res.IsError {
		t.Fatalf("valid escapes rejected: %+v, %v", res, err)
	}
	if got := fileContent(t, p); got != "😀 \\ud800" {
		t.Errorf("content = %q", got)
	}
}

func TestWriteFileCheckpointFailure(t *testing.T) {
	env := newRootEnv(t)
	p := writeTestFile(t, env.Root, "f.txt", "old\n")
	readFirst(t, env, p)
	boom := errors.New("disk full")
	env.BeforeWrite = func(string) error { return boom }
	_, err := NewWriteFile().Run(t.Context(), env, mustJSON(t, WriteFileInput{FilePath: p, Content: "new\n"}))
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the checkpoint error", err)
	}
	if got := fileContent(t, p); got != "old\n" {
		t.Errorf("file changed without a checkpoint: %q", got)
	}
}

func TestWriteFileThroughSymlink(t *testing.T) {
	env := newRootEnv(t)
	target := writeTestFile(t, env.Root, "real.txt", "old\n")
	link := filepath.Join(env.Root, "link.txt")
	os.Symlink("real.txt", link)
	readFirst(t, env, link)
	res := runTool(t, NewWriteFile(), env, WriteFileInput{FilePath: link, Content: "new\n"})
	if res.IsError {
		t.Fatal(res.Output)
	}
	if got := fileContent(t, target); got != "new\n" {
		t.Errorf("target = %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if d := cmp.Diff([]string{target}, res.Files); d != "" {
		t.Errorf("Files (-want +got):\n%s", d)
	}
}

func TestAtomicWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// Renaming a file over a non-empty directory fails after the temporary
	// file was written and synced.
	target := filepath.Join(dir, "target")
	os.Mkdir(target, 0o755)
	os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o644)
	if err := fsutil.WriteFileAtomic(target, []byte("data"), 0o644); err == nil {
		t.Fatal("rename over a directory succeeded")
	}
	if left := tempLeftovers(t, dir); len(left) > 0 {
		t.Errorf("temporary files left after a failed rename: %v", left)
	}
	// A failure to create the temporary file (missing directory) leaves
	// nothing either.
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	if left := tempLeftovers(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWriteFileUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	env := newRootEnv(t)
	p := writeTestFile(t, env.Root, "ro/f.txt", "old\n")
	readFirst(t, env, p)
	os.Chmod(filepath.Dir(p), 0o555)
	t.Cleanup(func() { os.Chmod(filepath.Dir(p), 0o755) })
	res := runTool(t, NewWriteFile(), env, WriteFileInput{FilePath: p, Content: "new\n"})
	if !res.IsError || !strings.Contains(res.Output, "The file was not changed") {
		t.Errorf("result = %+v", res)
	}
	if got := fileContent(t, p); got != "old\n" {
		t.Errorf("file = %q", got)
	}
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func BenchmarkWriteFile(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	env := &tool.Env{Root: root, Reads: tool.NewReadState(), Guard: withinGuard{root: root}}
	content := strings.Repeat("some typical line of source code\n", 2000)
	tool := NewWriteFile()
	for i := 0; b.Loop(); i++ {
		in := mustJSON(b, WriteFileInput{FilePath: filepath.Join(root, "f.txt"), Content: content + time.Duration(i).String()})
		if res, err := tool.Run(b.Context(), env, in); err != nil || res.IsError {
			b.Fatal(res.Output, err)
		}
	}
}

// TestWriteContentCap: content past maxWriteBytes is refused with a
// message telling the model to split the file, and nothing is created.
func TestWriteContentCap(t *testing.T) {
	env := newRootEnv(t)
	path := filepath.Join(env.Root, "big.txt")
	res := runTool(t, NewWriteFile(), env, WriteFileInput{FilePath: path, Content: strings.Repeat("x", maxWriteBytes+1)})
	if !res.IsError || !strings.Contains(res.Output, "Split it") {
		t.Errorf("oversized WriteFile: %+v", res.Output)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an oversized write created the file: %v", err)
	}
	// An existing file past the cap is not read into memory to be edited.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, maxWriteBytes+1); err != nil {
		t.Fatal(err)
	}
	env.Reads.Record(path, tool.FileStamp{})
	res = runTool(t, NewEditTool(), env, EditToolInput{FilePath: path, OldString: "a", NewString: "b"})
	if !res.IsError || !strings.Contains(res.Output, "more than the 10.0 MiB") {
		t.Errorf("edit of an oversized file: %+v", res.Output)
	}
}

package tools

import (
	"context"
	"errors"
	"github.com/odin-code/odin/tools/tool"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// bufferEditor is an editor with open buffers: reads of an open file get
// the buffer (unsaved edits included), writes go to the buffer and are
// saved to disk, as Zed does for fs/write_text_file. It records every
// path it was asked about.
type bufferEditor struct {
	mu      sync.Mutex
	buffers map[string]string
	asked   []string
	refuse  bool
}

func (e *bufferEditor) ReadTextFile(_ context.Context, path string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, "read "+path)
	if b, ok := e.buffers[path]; ok {
		return b, nil
	}
	return "", errors.New("not open")
}

func (e *bufferEditor) WriteTextFile(_ context.Context, path, content string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, "write "+path)
	if e.refuse {
		return errors.New("buffer is read-only")
	}
	if content == "" {
		return tool.ErrEditorDeclined // as ACP's fs/write_text_file cannot
	}
	e.buffers[path] = content
	return os.WriteFile(path, []byte(content), 0o644)
}

func TestEditorBuffers(t *testing.T) {
	env := newRootEnv(t)
	ed := &bufferEditor{buffers: map[string]string{}}
	env.Editor = ed
	p := writeTestFile(t, env.Root, "main.go", "package main\n\nfunc main() {}\n")
	// The user has an unsaved edit in the buffer.
	ed.buffers[p] = "package main\n\nfunc main() { println(\"unsaved\") }\n"

	res := runTool(t, NewReadFile(), env, ReadFileInput{FilePath: p})
	if res.IsError || !strings.Contains(res.Output, `println("unsaved")`) {
		t.Fatalf("ReadFile did not read the editor's buffer: %s", res.Output)
	}
	// An edit applies to the buffer's text (the disk lacks "unsaved"), and
	// is written through the editor.
	res = runTool(t, NewEditTool(), env, EditToolInput{FilePath: p, OldString: `"unsaved"`, NewString: `"saved by odin"`})
	if res.IsError {
		t.Fatalf("Edit against the buffer: %s", res.Output)
	}
	want := "package main\n\nfunc main() { println(\"saved by odin\") }\n"
	if ed.buffers[p] != want {
		t.Errorf("buffer after Edit:\n%s", ed.buffers[p])
	}
	// A second edit needs no re-read: the agent knows what it wrote.
	res = runTool(t, NewEditTool(), env, EditToolInput{FilePath: p, OldString: "saved by odin", NewString: "twice"})
	if res.IsError {
		t.Fatalf("second Edit: %s", res.Output)
	}

	// The user types in the buffer meanwhile: the next edit is refused as
	// stale, and nothing is written.
	ed.buffers[p] += "// typed by the user\n"
	before := ed.buffers[p]
	res = runTool(t, NewEditTool(), env, EditToolInput{FilePath: p, OldString: "twice", NewString: "thrice"})
	if !res.IsError || ed.buffers[p] != before {
		t.Errorf("an edit over the user's newer buffer went through: %s\n%s", res.Output, ed.buffers[p])
	}

	// A file the editor does not have open is read from disk.
	q := writeTestFile(t, env.Root, "notes.txt", "on disk\n")
	if res := runTool(t, NewReadFile(), env, ReadFileInput{FilePath: q}); res.IsError || !strings.Contains(res.Output, "on disk") {
		t.Errorf("fallback to disk: %s", res.Output)
	}
	// A write the editor declines (empty content) goes to the disk.
	if res := runTool(t, NewWriteFile(), env, WriteFileInput{FilePath: filepath.Join(env.Root, "empty.txt"), Content: ""}); res.IsError {
		t.Errorf("declined write: %s", res.Output)
	}
	if fi, err := os.Stat(filepath.Join(env.Root, "empty.txt")); err != nil || fi.Size() != 0 {
		t.Errorf("empty.txt after a declined write: %v %v", fi, err)
	}
	// A refused write is a tool error, and the file is unchanged.
	ed.refuse = true
	res = runTool(t, NewWriteFile(), env, WriteFileInput{FilePath: q, Content: "overwritten\n"})
	if got, _ := os.ReadFile(q); !res.IsError || string(got) != "on disk\n" {
		t.Errorf("refused write: %v %q, file %q", res.IsError, res.Output, got)
	}
}

// TestEditorBehindTheGuard: the editor is a way to read and write, not a
// way around the path guard: a path outside the root is refused before
// the editor is asked anything.
func TestEditorBehindTheGuard(t *testing.T) {
	env := newRootEnv(t)
	ed := &bufferEditor{buffers: map[string]string{}}
	env.Editor = ed
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ed.buffers[outside] = "secret\n"
	if res := runTool(t, NewReadFile(), env, ReadFileInput{FilePath: outside}); !res.IsError || strings.Contains(res.Output, "secret\n") {
		t.Errorf("ReadFile outside the root through the editor: %s", res.Output)
	}
	if res := runTool(t, NewWriteFile(), env, WriteFileInput{FilePath: outside, Content: "pwned\n"}); !res.IsError {
		t.Errorf("WriteFile outside the root through the editor: %s", res.Output)
	}
	if got, _ := os.ReadFile(outside); string(got) != "secret\n" {
		t.Errorf("outside file changed: %q", got)
	}
	if len(ed.asked) != 0 {
		t.Errorf("the editor was asked about paths outside the root: %v", ed.asked)
	}
}

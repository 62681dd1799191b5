package tools

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/tools/tool"
)

func numbered(from int, lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%d\t%s\n", from+i, l)
	}
	return b.String()
}

func TestReadFileText(t *testing.T) {
	env := newRootEnv(t)
	many := make([]string, 2500)
	for i := range many {
		many[i] = fmt.Sprintf("line %d", i+1)
	}
	long := strings.Repeat("é", 2100) // multibyte, cut on a rune boundary
	tests := []struct {
		name    string
		content string
		offset  int
		limit   int
		want    string
	}{
		{"numbered lines", "a\nb\n", 0, 0, numbered(1, "a", "b")},
		{"no final newline", "a\nb", 0, 0, numbered(1, "a", "b")},
		{"blank lines kept", "a\n\n\nb\n", 0, 0, numbered(1, "a", "", "", "b")},
		{"offset and limit", "a\nb\nc\nd\n", 2, 2, numbered(2, "b", "c") + "(showing lines 2-3 of 4; continue with offset=4)\n"},
		{"offset to the end", "a\nb\nc\n", 3, 0, numbered(3, "c") + "(showing lines 3-3 of 3)\n"},
		{"default limit 2000", strings.Join(many, "\n") + "\n", 0, 0,
			numbered(1, many[:2000]...) + "(showing lines 1-2000 of 2500; continue with offset=2001)\n"},
		{"long line cut", long + "\nnext\n", 0, 0,
			numbered(1, strings.Repeat("é", 2000)+" … [line truncated: 100 more characters]", "next") + "(1 long line(s) cut at 2000 characters)\n"},
		{"crlf shown without CR", "a\r\nb\r\n", 0, 0,
			numbered(1, "a", "b") + "(the file uses CRLF line endings (shown without \\r; edit tools keep them))\n"},
		{"mixed endings are not called CRLF", "a\r\nb\n", 0, 0, numbered(1, "a", "b")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeTestFile(t, env.Root, "f.txt", tt.content)
			res := runTool(t, NewReadFile(), env, ReadFileInput{FilePath: p, Offset: tt.offset, Limit: tt.limit})
			if res.IsError {
				t.Fatalf("error result: %s", res.Output)
			}
			if d := cmp.Diff(tt.want, res.Output); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
			stamp, ok := env.Reads.Get(p)
			info, _ := os.Stat(p)
			if !ok || stamp != tool.StampOf([]byte(tt.content), info.ModTime()) {
				t.Errorf("read state = %+v, %v; want the stamp of the whole file", stamp, ok)
			}
		})
	}
}

func TestReadFileHugeLine(t *testing.T) {
	// One line far longer than the reader's buffer must still be shown cut,
	// and hashed in full.
	env := newRootEnv(t)
	content := strings.Repeat("x", 3*readLineBuffer+7) + "\nend"
	p := writeTestFile(t, env.Root, "min.js", content)
	res := runTool(t, NewReadFile(), env, ReadFileInput{FilePath: p, Limit: 10})
	want := numbered(1, strings.Repeat("x", 2000)+fmt.Sprintf(" … [line truncated: %d more characters]", 3*readLineBuffer+7-2000), "end") +
		"(1 long line(s) cut at 2000 characters)\n"
	if d := cmp.Diff(want, res.Output); d != "" {
		t.Errorf("output (-want +got):\n%s", d)
	}
	stamp, _ := env.Reads.Get(p)
	if stamp.Size != int64(len(content)) {
		t.Errorf("stamp size = %d, want %d", stamp.Size, len(content))
	}
}

func TestReadFileErrors(t *testing.T) {
	env := newRootEnv(t)
	text := writeTestFile(t, env.Root, "a.txt", "one\ntwo\n")
	big := writeTestFile(t, env.Root, "big.txt", strings.Repeat("0123456789abcdef\n", (readMaxWholeBytes/17)+10))
	bin := writeTestFile(t, env.Root, "prog.bin", "ELF\x00\x01\x02")
	latin1 := writeTestFile(t, env.Root, "latin1.txt", "caf\xe9\n")
	dir := filepath.Join(env.Root, "sub")
	os.Mkdir(dir, 0o755)
	fifo := filepath.Join(env.Root, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	outside := writeTestFile(t, t.TempDir(), "secret.txt", "x")

	tests := []struct {
		name   string
		in     ReadFileInput
		want   string
		denied bool
	}{
		{"relative path", ReadFileInput{FilePath: "a.txt"}, "file_path must be an absolute path, got \"a.txt\" (e.g. " + text + ")", false},
		{"empty path", ReadFileInput{FilePath: ""}, "file_path is empty", false},
		{"missing file", ReadFileInput{FilePath: filepath.Join(env.Root, "nope.txt")}, "file does not exist", false},
		{"directory", ReadFileInput{FilePath: dir}, "is a directory, not a file; use LS", false},
		{"fifo", ReadFileInput{FilePath: fifo}, "not a regular file", false},
		{"binary", ReadFileInput{FilePath: bin}, "is a binary file", false},
		{"not utf-8", ReadFileInput{FilePath: latin1}, "is a binary file", false},
		{"too big without offset", ReadFileInput{FilePath: big}, "Read it in parts with offset and limit", false},
		{"offset past the end", ReadFileInput{FilePath: text, Offset: 5}, "offset 5 is past the end of " + text + ", which has 2 lines", false},
		{"outside the project", ReadFileInput{FilePath: outside}, "permission denied", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runTool(t, NewReadFile(), env, tt.in)
			if !res.IsError || !strings.Contains(res.Output, tt.want) || res.Denied != tt.denied {
				t.Errorf("result = %+v, want an error containing %q (denied %v)", res, tt.want, tt.denied)
			}
		})
	}
	for _, p := range []string{bin, latin1, big, outside} {
		if _, ok := env.Reads.Get(p); ok {
			t.Errorf("%s recorded as read after an error", p)
		}
	}
	// A big file can be read in parts.
	res := runTool(t, NewReadFile(), env, ReadFileInput{FilePath: big, Offset: 2, Limit: 1})
	if res.IsError || !strings.HasPrefix(res.Output, numbered(2, "0123456789abcdef")) {
		t.Errorf("partial read of a big file = %+v", res)
	}
}

func TestReadFileSpecial(t *testing.T) {
	env := newRootEnv(t)
	empty := writeTestFile(t, env.Root, "empty.txt", "")
	res := runTool(t, NewReadFile(), env, ReadFileInput{FilePath: empty})
	if res.IsError || !strings.Contains(res.Output, "exists but is empty") {
		t.Errorf("empty file = %+v", res)
	}
	if _, ok := env.Reads.Get(empty); !ok {
		t.Error("empty file not recorded as read")
	}

	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	img := writeTestFile(t, env.Root, "logo.png", buf.String())
	res = runTool(t, NewReadFile(), env, ReadFileInput{FilePath: img})
	if res.IsError || !strings.Contains(res.Output, "is an image (image/png") || !strings.Contains(res.Output, "3x2 pixels") {
		t.Errorf("image = %+v", res)
	}
}

func TestReadFileThroughSymlink(t *testing.T) {
	env := newRootEnv(t)
	target := writeTestFile(t, env.Root, "real.txt", "hi\n")
	link := filepath.Join(env.Root, "link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	res := runTool(t, NewReadFile(), env, ReadFileInput{FilePath: link})
	if res.IsError || res.Output != numbered(1, "hi") {
		t.Fatalf("result = %+v", res)
	}
	// The read is recorded under the resolved path, which write tools use.
	if _, ok := env.Reads.Get(target); !ok {
		t.Error("read not recorded for the resolved path")
	}
}

func BenchmarkReadFile(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	env := &tool.Env{Root: root, Reads: tool.NewReadState(), Guard: withinGuard{root: root}}
	var sb strings.Builder
	for i := 0; sb.Len() < 200<<10; i++ {
		fmt.Fprintf(&sb, "func f%d() int { return %d } // some typical source text\n", i, i)
	}
	p := filepath.Join(root, "f.go")
	os.WriteFile(p, []byte(sb.String()), 0o644)
	tool := NewReadFile()
	in := []byte(fmt.Sprintf(`{"file_path":%q}`, p))
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		if res, err := tool.Run(b.Context(), env, in); err != nil || res.IsError {
			b.Fatal(res.Output, err)
		}
	}
}

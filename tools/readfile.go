package tools

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // registers GIF for image.DecodeConfig
	_ "image/jpeg" // registers JPEG for image.DecodeConfig
	_ "image/png"  // registers PNG for image.DecodeConfig
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed readfile.md
var readFileDescription string

// ReadFile limits. They bound what one call can put into the model's
// context; the model pages through bigger files with offset and limit.
const (
	readDefaultLimit  = 2000      // lines shown when limit is omitted
	readMaxLineChars  = 2000      // longer lines are cut with a marker
	readMaxWholeBytes = 256 << 10 // files bigger than this need offset/limit
	readMaxOutput     = 256 << 10 // bytes of numbered output per call
	readSniffBytes    = 8000      // what the binary sniff looks at (git's figure)
	readLineBuffer    = 64 << 10  // bufio buffer; longer lines are consumed in pieces
	readMaxImageBytes = 100 << 20 // images above this are described without decoding
)

// ReadFileInput is ReadFile's input.
type ReadFileInput struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset,omitempty" jsonschema:"First line, 1-based"`
	Limit    int    `json:"limit,omitempty"`
}

// NewReadFile returns the ReadFile tool: numbered lines of a text file, in
// pages, recording what the agent saw so that write tools can insist on a
// fresh read.
func NewReadFile() tool.Tool {
	return newBuiltin[ReadFileInput](NameReadFile, tool.ClassRead, readFileDescription, readFile,
		tool.WithSchema(func(s *jsonschema.Schema) {
			setMinimum(s, "offset", 0)
			setMinimum(s, "limit", 0)
		}))
}

func readFile(ctx context.Context, env *tool.Env, in ReadFileInput) (tool.Result, error) {
	path, bad, err := resolveArgPath(ctx, env, "file_path", in.FilePath, tool.AccessRead)
	if err != nil || bad != nil {
		return deref(bad), err
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("file does not exist: %s. Use Glob or LS to find the right path.", path), nil
	case err != nil:
		return tool.Errorf("cannot read %s: %v", path, unwrapPathError(err)), nil
	case info.IsDir():
		return tool.Errorf("%s is a directory, not a file; use LS to list it.", path), nil
	case !info.Mode().IsRegular():
		// Opening a FIFO or a device could block or never end.
		return tool.Errorf("%s is not a regular file (%s); ReadFile reads regular files only.", path, info.Mode().Type()), nil
	}
	// O_NONBLOCK: a FIFO swapped in after the Stat above must not block
	// the open; the descriptor's own Stat then decides.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return tool.Errorf("cannot read %s: %v", path, unwrapPathError(err)), nil
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		return tool.Errorf("%s changed while being read and is no longer a regular file; ReadFile reads regular files only.", path), nil
	}

	head := make([]byte, readSniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return tool.Errorf("cannot read %s: %v", path, unwrapPathError(err)), nil
	}
	head = head[:n]
	if kind := sniffBinary(head); kind != "" {
		return describeBinary(env, f, path, info, head, kind)
	}
	if info.Size() == 0 && n == 0 {
		recordRead(env, path, nil, info)
		return tool.Result{Output: fmt.Sprintf("(%s exists but is empty: 0 bytes)", path)}, nil
	}
	partial := in.Offset > 0 || in.Limit > 0
	if !partial && info.Size() > readMaxWholeBytes {
		return tool.Errorf("%s is %s, more than the %s ReadFile returns at once. Read it in parts with offset and limit (e.g. offset=1, limit=500), or search it with Grep.",
			path, HumanBytes(info.Size()), HumanBytes(readMaxWholeBytes)), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tool.Result{}, fmt.Errorf("tools: ReadFile: seek %s: %w", path, err)
	}
	var src io.Reader = f
	if text, ok := editorText(ctx, env, path); ok {
		// The editor's buffer, unsaved edits included.
		src = strings.NewReader(text)
	}
	page, err := readLines(ctx, src, in.Offset, in.Limit)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Errorf("cannot read %s: %v", path, unwrapPathError(err)), nil
	}
	if page.last < page.first {
		return tool.Errorf("offset %d is past the end of %s, which has %d lines", page.offset, path, page.total), nil
	}
	if page.invalidUTF8 {
		// The sniff only saw the head; the rest turned out not to be text.
		return describeBinary(env, f, path, info, head, "binary")
	}
	// The stamp is of the whole file even for a partial read: write tools
	// compare it against what is on disk.
	recordStamp(env, path, tool.FileStamp{Hash: page.hash, ModTime: info.ModTime(), Size: page.size})
	return tool.Result{Output: page.render()}, nil
}

// readPage is one window of a text file plus facts about the whole file.
type readPage struct {
	out         bytes.Buffer
	first, last int // line numbers shown (1-based, inclusive); last < first if none
	total       int // lines in the file
	cut         int // long lines cut
	offset      int // requested start line
	outputFull  bool
	crlf        bool
	invalidUTF8 bool
	hash        [sha256.Size]byte
	size        int64
}

// readLines streams r once: it hashes every byte, counts lines and keeps the
// numbered lines of the window [offset, offset+limit). Lines longer than the
// buffer are consumed in pieces so a huge single-line file costs no more
// memory than a normal one.
func readLines(ctx context.Context, r io.Reader, offset, limit int) (*readPage, error) {
	if offset < 1 {
		offset = 1
	}
	if limit <= 0 {
		limit = readDefaultLimit
	}
	h := sha256.New()
	counted := &countingWriter{w: h}
	br := bufio.NewReaderSize(io.TeeReader(r, counted), readLineBuffer)
	p := &readPage{first: offset, last: offset - 1, offset: offset}
	var (
		line       []byte // the kept prefix of the current line (window lines only)
		runes      int    // runes of the current line so far, terminator included
		carry      []byte // the start of a rune split across two pieces
		crlf, lf   int    // line terminators seen
		lineNo     = 1
		lineExists bool // the current line has at least one byte
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		inWindow := lineNo >= offset && lineNo < offset+limit && !p.outputFull
		data := chunk
		if len(carry) > 0 {
			data = append(carry, chunk...)
			carry = nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			data, carry = splitPartialRune(data)
			carry = bytes.Clone(carry)
		}
		if len(data) > 0 {
			lineExists = true
			if !utf8.Valid(data) {
				p.invalidUTF8 = true
			}
			if inWindow && runes <= readMaxLineChars+2 {
				line = appendRunes(line, data, readMaxLineChars+2-runes)
			}
			runes += utf8.RuneCount(data)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		if len(carry) > 0 {
			p.invalidUTF8 = true // a rune cut off by the end of the file
		}
		if !lineExists {
			break // end of file right after a newline, or an empty file
		}
		content := runes
		switch {
		case bytes.HasSuffix(chunk, []byte("\r\n")):
			crlf++
			content -= 2
		case bytes.HasSuffix(chunk, []byte("\n")):
			lf++
			content--
		}
		if inWindow {
			p.appendLine(lineNo, line, content)
		}
		p.total = lineNo
		line, runes, lineExists = line[:0], 0, false
		if err == io.EOF {
			break
		}
		lineNo++
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	p.crlf = crlf > 0 && lf == 0
	copy(p.hash[:], h.Sum(nil))
	p.size = counted.n
	return p, nil
}

// splitPartialRune splits b before a trailing incomplete UTF-8 sequence.
func splitPartialRune(b []byte) (whole, partial []byte) {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i], b[len(b)-i:]
			}
			break
		}
	}
	return b, nil
}

// appendLine adds one numbered line to the page, cutting long lines and
// stopping when the page is full. runes is the line's length without its
// terminator. It formats by hand: this is the per-line hot path.
func (p *readPage) appendLine(n int, line []byte, runes int) {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	var marker string
	if runes > readMaxLineChars {
		line = truncateRunes(line, readMaxLineChars)
		marker = fmt.Sprintf(" … [line truncated: %d more characters]", runes-readMaxLineChars)
		p.cut++
	}
	var num [24]byte
	digits := strconv.AppendInt(num[:0], int64(n), 10)
	// The number is not padded to cat -n's six columns: the padding was
	// 4-5 bytes a line in the model's history, on every later request,
	// and a tab ends the number as well.
	size := len(digits) + 1 + len(line) + len(marker) + 1
	if p.out.Len()+size > readMaxOutput && p.last >= p.first {
		p.outputFull = true
		return
	}
	p.out.Write(digits)
	p.out.WriteByte('\t')
	p.out.Write(line)
	p.out.WriteString(marker)
	p.out.WriteByte('\n')
	p.last = n
}

func (p *readPage) render() string {
	var b strings.Builder
	b.Write(p.out.Bytes())
	var notes []string
	if p.first > 1 || p.last < p.total {
		more := ""
		if p.last < p.total {
			more = fmt.Sprintf("; continue with offset=%d", p.last+1)
		}
		notes = append(notes, fmt.Sprintf("showing lines %d-%d of %d%s", p.first, p.last, p.total, more))
	}
	if p.outputFull {
		notes = append(notes, fmt.Sprintf("output stopped at %s", HumanBytes(readMaxOutput)))
	}
	if p.cut > 0 {
		notes = append(notes, fmt.Sprintf("%d long line(s) cut at %d characters", p.cut, readMaxLineChars))
	}
	if p.crlf {
		notes = append(notes, "the file uses CRLF line endings (shown without \\r; edit tools keep them)")
	}
	if len(notes) > 0 {
		b.WriteString("(" + strings.Join(notes, "; ") + ")\n")
	}
	return b.String()
}

// sniffBinary returns "" for text, else a short reason. Like git and
// ripgrep it looks for a NUL byte in the head; it also rejects heads that
// are not UTF-8, since the tools only edit UTF-8 text.
func sniffBinary(head []byte) string {
	if bytes.IndexByte(head, 0) >= 0 {
		return "binary"
	}
	// A rune may be cut at the end of the sniff window.
	trimmed, _ := splitPartialRune(head)
	if !utf8.Valid(trimmed) {
		return "binary"
	}
	return ""
}

// describeBinary reports what a non-text file is. Images are a success
// (their type and size are what the model can learn); other binaries are an
// error result because nothing can be shown.
func describeBinary(env *tool.Env, f *os.File, path string, info fs.FileInfo, head []byte, kind string) (tool.Result, error) {
	mime := http.DetectContentType(head)
	if strings.HasPrefix(mime, "image/") {
		desc := fmt.Sprintf("%s is an image (%s, %s)", path, mime, HumanBytes(info.Size()))
		if _, err := f.Seek(0, io.SeekStart); err == nil && info.Size() <= readMaxImageBytes {
			if cfg, _, err := image.DecodeConfig(f); err == nil {
				desc += fmt.Sprintf(", %dx%d pixels", cfg.Width, cfg.Height)
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err == nil {
			if stamp, err := stampReader(f, info); err == nil {
				recordStamp(env, path, stamp)
			}
		}
		return tool.Result{Output: desc + ". ReadFile cannot show image content."}, nil
	}
	return tool.Errorf("%s is a %s file (%s, %s); ReadFile shows text only. Use ExecuteCommand with a suitable tool (file, xxd, unzip -l ...) to inspect it.",
		path, kind, mime, HumanBytes(info.Size())), nil
}

func stampReader(r io.Reader, info fs.FileInfo) (tool.FileStamp, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return tool.FileStamp{}, err
	}
	s := tool.FileStamp{ModTime: info.ModTime(), Size: n}
	copy(s.Hash[:], h.Sum(nil))
	return s, nil
}

func recordRead(env *tool.Env, path string, content []byte, info fs.FileInfo) {
	recordStamp(env, path, tool.StampOf(content, info.ModTime()))
}

// editorText is path's text as the editor holds it, when the session runs
// in an editor that offers it; ok is false otherwise, or when the editor
// cannot read it, and the caller reads the disk.
func editorText(ctx context.Context, env *tool.Env, path string) (string, bool) {
	if env == nil || env.Editor == nil {
		return "", false
	}
	text, err := env.Editor.ReadTextFile(ctx, path)
	if err != nil {
		return "", false
	}
	return text, true
}

// recordStamp notes a stamp in the agent's read state, if it has one.
func recordStamp(e *tool.Env, path string, s tool.FileStamp) {
	if e != nil && e.Reads != nil {
		e.Reads.Record(path, s)
	}
}

// resolveArgPath checks and resolves a path argument that must be absolute.
// It returns the resolved path, or a Result the model can act on (bad path,
// denial), or a Go error when the Env is unusable.
func resolveArgPath(ctx context.Context, env *tool.Env, arg, p string, access tool.Access) (string, *tool.Result, error) {
	if env == nil || env.Guard == nil {
		return "", nil, errors.New("tools: env has no path guard")
	}
	if strings.TrimSpace(p) == "" {
		r := tool.Errorf("%s is empty; give an absolute path", arg)
		return "", &r, nil
	}
	if !filepath.IsAbs(p) {
		hint := ""
		if env.Root != "" {
			hint = fmt.Sprintf(" (e.g. %s)", filepath.Join(env.Root, p))
		}
		r := tool.Errorf("%s must be an absolute path, got %q%s", arg, p, hint)
		return "", &r, nil
	}
	resolved, err := env.Guard.Resolve(ctx, p, access)
	if err != nil {
		r := tool.Errorf("%v", err)
		r.Denied = tool.IsDenied(err)
		return "", &r, nil
	}
	// Writes too: an edit reads the file first and shows a diff of it.
	if r := deniedRead(env, p, resolved); r != nil {
		return "", r, nil
	}
	return resolved, nil, nil
}

func deref(r *tool.Result) tool.Result {
	if r == nil {
		return tool.Result{}
	}
	return *r
}

// unwrapPathError drops the "open /path:" prefix the caller already shows.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// appendRunes appends at most max runes of src to dst.
func appendRunes(dst, src []byte, max int) []byte {
	return append(dst, truncateRunes(src, max)...)
}

// truncateRunes returns the prefix of b holding at most max runes.
func truncateRunes(b []byte, max int) []byte {
	if len(b) <= max {
		return b // a rune is at least one byte
	}
	i := 0
	for n := 0; n < max && i < len(b); n++ {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return b[:i]
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// HumanBytes formats a byte count for a message ("812 bytes", "4.2 KiB",
// "3.0 MiB").
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed writefile.md
var writeFileDescription string

// newFilePerm is the mode of files the tools create. Existing files keep
// theirs.
const newFilePerm fs.FileMode = 0o644

// maxWriteBytes bounds the content a write tool writes and the size of a
// file it edits: the content is held several times over (the JSON input,
// the decoded string, the checkpoint's before-copy), so a bigger file would
// push one call past Odin's memory budget. Source files are far smaller;
// a model producing more should split the file.
const maxWriteBytes = 10 << 20

// diffStatMax bounds the texts diffStat compares: diffing is superlinear,
// and past this size the line counts are not worth the time and memory.
const diffStatMax = 1 << 20

// WriteFileInput is WriteFile's input.
type WriteFileInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content" jsonschema:"Exact whole content, final newline included"`
}

// NewWriteFile returns the WriteFile tool: it creates a file or replaces
// one the agent has read and that has not changed since, atomically.
func NewWriteFile() tool.Tool {
	return requireUTF8Input(newBuiltin[WriteFileInput](NameWriteFile, tool.ClassWrite, writeFileDescription, writeFile))
}

func writeFile(ctx context.Context, env *tool.Env, in WriteFileInput) (tool.Result, error) {
	path, bad, err := resolveArgPath(ctx, env, "file_path", in.FilePath, tool.AccessWrite)
	if err != nil || bad != nil {
		return deref(bad), err
	}
	if !utf8.ValidString(in.Content) {
		return tool.Errorf("content is not valid UTF-8; WriteFile writes UTF-8 text only"), nil
	}
	if len(in.Content) > maxWriteBytes {
		return tool.Errorf("content is %s, more than the %s WriteFile writes in one call. Split it into several smaller files, or write a first part with WriteFile and add the rest with EditTool.",
			HumanBytes(int64(len(in.Content))), HumanBytes(maxWriteBytes)), nil
	}
	unlock, bad := lockForWrite(ctx, env, path)
	if bad != nil {
		return *bad, nil
	}
	defer unlock()
	cur, bad := loadExisting(ctx, env, path, "WriteFile")
	if bad != nil {
		return *bad, nil
	}
	content := []byte(in.Content)
	if cur.exists && bytes.Equal(cur.content, content) {
		return tool.Result{Output: fmt.Sprintf("%s already has exactly this content; nothing was written.", path)}, nil
	}
	if bad, err := commitWrite(ctx, env, path, cur, content); err != nil || bad != nil {
		return deref(bad), err
	}
	var out string
	if cur.exists {
		added, removed := diffStat(string(cur.content), in.Content)
		out = fmt.Sprintf("Updated %s: %d lines, %s (+%d -%d lines).", path, countLines(in.Content), HumanBytes(int64(len(content))), added, removed)
	} else {
		out = fmt.Sprintf("Created %s: %d lines, %s.", path, countLines(in.Content), HumanBytes(int64(len(content))))
	}
	return tool.Result{Output: out, Files: []string{path}}, nil
}

// existingFile is what a write tool found at its target before writing.
type existingFile struct {
	exists  bool
	content []byte
	perm    fs.FileMode
}

// writeRoot is the allowed root a resolved path is written beneath: the
// project root or a directory added with --add-dir, else "/" (a path the
// user approved outside them; it is resolved, so no component may be a
// link either).
func writeRoot(env *tool.Env, path string) string {
	roots := []string{env.Root}
	if d, ok := env.Guard.(interface{ Dirs() []string }); ok {
		roots = append(roots, d.Dirs()...)
	}
	return fsutil.RootOf(path, roots...)
}

// lockForWrite serializes writes to path: the session's in-process path
// lock, then an advisory lock on the file's directory (its nearest
// existing ancestor when it is missing) shared with every other Odin
// process. The caller holds both from its freshness check to its write, so
// the check is a compare-and-swap: an edit made meanwhile by another
// session is seen, never overwritten.
func lockForWrite(ctx context.Context, env *tool.Env, path string) (func(), *tool.Result) {
	unlockPath := env.LockPath(path)
	root := writeRoot(env, path)
	dir := filepath.Dir(path)
	for dir != root && len(dir) > len(root) {
		if fi, err := fsutil.LstatIn(root, dir); err == nil && fi.IsDir() {
			break
		}
		dir = filepath.Dir(dir)
	}
	unlockDir, err := fsutil.LockDirIn(ctx, root, dir)
	if err != nil {
		unlockPath()
		r := writeRefusal(path, err)
		return nil, &r
	}
	return func() { unlockDir(); unlockPath() }, nil
}

// writeRefusal explains a failed confined operation; a symlink met on the
// way means the path changed since it was checked.
func writeRefusal(path string, err error) tool.Result {
	switch {
	case errors.Is(err, fsutil.ErrSymlink):
		return tool.Errorf("cannot write %s: a directory on its path is now a symbolic link (it changed after the path was checked), so the write could land elsewhere; nothing was written. Check the path with LS.", path)
	case errors.Is(err, fsutil.ErrOutside):
		return tool.Errorf("cannot write %s: it is outside the allowed directories; nothing was written.", path)
	}
	return tool.Errorf("cannot write %s: %v. The file was not changed.", path, unwrapPathError(err))
}

// loadExisting reads the target of a write. A missing file is fine (the
// caller decides whether it may be created); an existing one must have been
// read by this agent and be unchanged since, compared by content hash
// because mtimes are coarse and can be preserved by other tools. The file
// is read without following links (a link at the target now was not there
// when the guard resolved it).
func loadExisting(ctx context.Context, env *tool.Env, path, toolName string) (existingFile, *tool.Result) {
	root := writeRoot(env, path)
	info, err := fsutil.LstatIn(root, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return existingFile{}, nil
	case err != nil:
		r := writeRefusal(path, err)
		return existingFile{}, &r
	case info.IsDir():
		r := tool.Errorf("%s is a directory; %s writes files.", path, toolName)
		return existingFile{}, &r
	case info.Mode()&fs.ModeSymlink != 0:
		r := tool.Errorf("%s became a symbolic link after its path was checked; %s does not write through it. Nothing was written.", path, toolName)
		return existingFile{}, &r
	case !info.Mode().IsRegular():
		r := tool.Errorf("%s is not a regular file (%s); %s writes regular files only.", path, info.Mode().Type(), toolName)
		return existingFile{}, &r
	}
	var stamp tool.FileStamp
	ok := false
	if env.Reads != nil {
		stamp, ok = env.Reads.Get(path)
	}
	if !ok {
		r := tool.Errorf("%s exists and you have not read it: read the file first with ReadFile, then call %s again.", path, toolName)
		return existingFile{}, &r
	}
	content, info, err := fsutil.ReadFileIn(root, path, maxWriteBytes)
	if errors.Is(err, fsutil.ErrTooLarge) {
		r := tool.Errorf("%s is %s, more than the %s %s changes in one call; edit it with ExecuteCommand (e.g. sed) or split it.", path, HumanBytes(info.Size()), HumanBytes(maxWriteBytes), toolName)
		return existingFile{}, &r
	}
	if err != nil {
		r := tool.Errorf("cannot read %s: %v", path, unwrapPathError(err))
		return existingFile{}, &r
	}
	if text, ok := editorText(ctx, env, path); ok {
		// The editor's buffer is the file as the user sees it, and as
		// ReadFile showed it.
		content = []byte(text)
	}
	if tool.StampOf(content, info.ModTime()).Hash != stamp.Hash {
		r := tool.Errorf("%s changed on disk since you read it; read it again with ReadFile, then redo your change against the new content.", path)
		return existingFile{}, &r
	}
	return existingFile{
		exists:  true,
		content: content,
		perm:    info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky),
	}, nil
}

// commitWrite checkpoints, writes atomically and records the new stamp (the
// agent knows this content, so a follow-up edit needs no re-read). A
// failed checkpoint is a Go error: writing without a way back is not an
// option. A failed write is a result naming the cause; the file is then
// untouched. The caller holds lockForWrite.
func commitWrite(ctx context.Context, env *tool.Env, path string, cur existingFile, content []byte) (*tool.Result, error) {
	if len(content) > maxWriteBytes {
		r := tool.Errorf("the result would be %s, more than the %s a write tool writes in one call; split the file.", HumanBytes(int64(len(content))), HumanBytes(maxWriteBytes))
		return &r, nil
	}
	if env.BeforeWrite != nil {
		if err := env.BeforeWrite(path); err != nil {
			return nil, fmt.Errorf("tools: checkpoint %s before writing: %w", path, err)
		}
	}
	if env.IntendWrite != nil {
		if err := env.IntendWrite(path, content); err != nil {
			return nil, fmt.Errorf("tools: checkpoint %s before writing: %w", path, err)
		}
	}
	if env.Editor != nil {
		// Through the editor's buffer, so the user sees the change where
		// they are editing; the path was authorised and resolved above.
		err := env.Editor.WriteTextFile(ctx, path, string(content))
		switch {
		case err == nil:
			var mtime time.Time
			if info, err := os.Lstat(path); err == nil {
				mtime = info.ModTime()
			}
			recordStamp(env, path, tool.StampOf(content, mtime))
			return nil, nil
		case !errors.Is(err, tool.ErrEditorDeclined):
			r := tool.Errorf("cannot write %s: the editor refused: %v. The file was not changed.", path, err)
			return &r, nil
		}
	}
	root := writeRoot(env, path)
	perm := newFilePerm
	if cur.exists {
		perm = cur.perm
	} else if err := fsutil.MkdirAllIn(root, filepath.Dir(path), 0o755); err != nil {
		r := writeRefusal(path, err)
		return &r, nil
	}
	if err := fsutil.WriteFileIn(root, path, content, perm); err != nil {
		r := writeRefusal(path, err)
		return &r, nil
	}
	if info, err := fsutil.LstatIn(root, path); err == nil {
		recordStamp(env, path, tool.StampOf(content, info.ModTime()))
	}
	return nil, nil
}

// requireUTF8Input rejects arguments that are not valid UTF-8 text before
// JSON decoding would silently turn the bad bytes (or a lone surrogate
// escape) into U+FFFD and write a corrupted file.
func requireUTF8Input(t tool.Tool) tool.Tool {
	return Wrap(t, func(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
		if off, ok := invalidJSONText(input); !ok {
			return tool.Errorf("the arguments of %s are not valid UTF-8 text (bad byte or lone surrogate escape at offset %d); %s writes UTF-8 text only.",
				t.Info().Name, off, t.Info().Name), nil
		}
		return t.Run(ctx, env, input)
	})
}

// invalidJSONText reports the offset of the first byte sequence in raw that
// is not valid UTF-8 or a \u escape of an unpaired surrogate.
func invalidJSONText(raw []byte) (int, bool) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf {
			if c == '\\' && i+1 < len(raw) {
				if raw[i+1] == 'u' {
					r, ok := hex4(raw, i+2)
					if ok && r >= 0xD800 && r < 0xDC00 {
						// A high surrogate must be followed by a low one.
						if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
							if lo, ok := hex4(raw, i+8); ok && lo >= 0xDC00 && lo < 0xE000 {
								i += 12
								continue
							}
						}
						return i, false
					}
					if ok && r >= 0xDC00 && r < 0xE000 {
						return i, false
					}
				}
				i += 2
				continue
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size == 1 {
			return i, false
		}
		i += size
	}
	return 0, true
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// diffStat counts the lines added and removed between two texts.
func diffStat(before, after string) (added, removed int) {
	if len(before) > diffStatMax || len(after) > diffStatMax {
		return countLines(after), countLines(before)
	}
	before, after = lf(before), lf(after)
	for _, e := range udiff.Lines(before, after) {
		removed += countLines(before[e.Start:e.End])
		added += countLines(e.New)
	}
	return added, removed
}

// diffSnippet is a unified diff of the change for the model, with CRLF
// shown as LF and at most max bytes. It starts at the first hunk: the
// "--- path" and "+++ path" lines would name the file twice more right
// after the result's first line, in every later request of the
// conversation.
func diffSnippet(path, before, after string, max int) string {
	if len(before) > diffStatMax || len(after) > diffStatMax {
		return fmt.Sprintf("(diff not shown: the file is larger than %s; ReadFile the changed lines to check them)\n", HumanBytes(diffStatMax))
	}
	d := udiff.Unified(path, path, lf(before), lf(after))
	if i := strings.Index(d, "\n@@"); i >= 0 && strings.HasPrefix(d, "--- ") {
		d = d[i+1:]
	}
	if len(d) > max {
		cut := strings.LastIndexByte(d[:max], '\n') + 1
		d = d[:cut] + fmt.Sprintf("… (diff truncated: %d more bytes)\n", len(d)-cut)
	}
	return d
}

func lf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// countLines counts lines the way an editor shows them: a final line
// without a newline still counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

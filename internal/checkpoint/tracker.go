package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/aymanbagabas/go-udiff"

	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/messages"
)

// File is the state of one file before a change set touched it, or one
// entry of another kind, told by Mode's type bits:
//
//   - none: a regular file, restorable from Content and Mode;
//   - fs.ModeDir: a directory, whose Path ends in a separator; Existed
//     false means the change set created it, so undo removes it when it is
//     empty, true that the change set removed it, so undo makes it again;
//   - fs.ModeIrregular: a file a command changed that undo cannot
//     restore (Odin had no copy of it: over the limits, or on the read
//     deny list); Content says why, and undo reports it, never touches it.
type File struct {
	// Path is absolute.
	Path string
	// Existed is false when the change set created the file.
	Existed bool
	Mode    fs.FileMode
	Content []byte
	// AfterHashes are the SHA-256s (hex) of every content Odin wrote to
	// the file in the change set, each recorded before its write, and of
	// the file when the change set was committed. A file matching one of
	// them is in a state Odin left it in (also after a crash between a
	// write and the commit); one matching none was changed by someone else.
	AfterHashes []string
}

// JoinHashes and SplitHashes encode AfterHashes in one stored field.
func JoinHashes(h []string) string { return strings.Join(h, " ") }

// SplitHashes is the inverse of JoinHashes.
func SplitHashes(s string) []string { return strings.Fields(s) }

// maxSnapshotBytes bounds the file a snapshot holds in memory (and in the
// store); the write tools refuse files past 10 MiB before they get here.
const maxSnapshotBytes = 16 << 20

// Tracker records the original state of every file a change set writes.
type Tracker struct {
	root  string
	label string

	mu    sync.Mutex
	order []string
	files map[string]*File
	// found lists the entries recorded by Record that no write tool
	// wrote (a command's changes, directories): they are undone with the
	// change set but are not among the files it reports as written.
	found []string
}

// IntendWrite records the content about to be written to path (which must
// have been snapshotted by BeforeWrite), so that undo recognises it as
// Odin's even if the process dies before the change set is committed.
func (t *Tracker) IntendWrite(path string, content []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.files[path]
	if !ok {
		return fmt.Errorf("checkpoint: %s was not snapshotted before its write", path)
	}
	f.AfterHashes = appendHash(f.AfterHashes, hashBytes(content))
	return nil
}

// Deleted is the after-hash recorded for a file the change set removed
// (an isolated specialist's patch deleting it): undo then restores the
// missing file instead of taking it for someone else's change.
const Deleted = "deleted"

// IntendDelete records that path (snapshotted by BeforeWrite) is about to
// be removed.
func (t *Tracker) IntendDelete(path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.files[path]
	if !ok {
		return fmt.Errorf("checkpoint: %s was not snapshotted before its removal", path)
	}
	f.AfterHashes = appendHash(f.AfterHashes, Deleted)
	return nil
}

// Intents returns the after-hashes recorded for path so far.
func (t *Tracker) Intents(path string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f, ok := t.files[path]; ok {
		return append([]string(nil), f.AfterHashes...)
	}
	return nil
}

// Forget drops path's snapshot, when persisting it failed: the write is
// then aborted, and the next attempt must snapshot again.
func (t *Tracker) Forget(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.files[path]; !ok {
		return
	}
	delete(t.files, path)
	t.order = without(t.order, path)
	t.found = without(t.found, path)
}

func without(list []string, path string) []string {
	for i, p := range list {
		if p == path {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// Record adds entries found outside the write tools (see File): what a
// command changed, directories a change set created. As with BeforeWrite
// the first record of a path wins, since it holds the state before the
// change set; a path recorded already only gains the after-hashes. It
// returns the entries that were new and the paths that gained hashes.
func (t *Tracker) Record(found []File) (added []File, merged []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range found {
		if cur, ok := t.files[f.Path]; ok {
			n := len(cur.AfterHashes)
			for _, h := range f.AfterHashes {
				cur.AfterHashes = appendHash(cur.AfterHashes, h)
			}
			if len(cur.AfterHashes) != n {
				merged = append(merged, f.Path)
			}
			continue
		}
		c := f
		c.AfterHashes = append([]string(nil), f.AfterHashes...)
		t.files[f.Path] = &c
		t.found = append(t.found, f.Path)
		added = append(added, c)
	}
	return added, merged
}

// CreatedDirs lists, outermost first, the directories beneath root that
// writing path would have to create (path's missing ancestors), each as
// a directory entry of a change set that creates it.
func CreatedDirs(root, path string) []File {
	var dirs []File
	for d := filepath.Dir(path); d != root && d != filepath.Dir(d); d = filepath.Dir(d) {
		if r, err := filepath.Rel(root, d); err != nil || r == "." || strings.HasPrefix(r, "..") {
			break
		}
		if _, err := fsutil.LstatIn(fsutil.RootOf(d, root), d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		dirs = append([]File{{Path: d + string(filepath.Separator), Mode: fs.ModeDir | 0o755}}, dirs...)
	}
	return dirs
}

func appendHash(hs []string, h string) []string {
	for _, x := range hs {
		if x == h {
			return hs
		}
	}
	return append(hs, h)
}

// NewTracker returns an empty tracker for the project at root.
func NewTracker(root, label string) *Tracker {
	return &Tracker{root: root, label: label, files: map[string]*File{}}
}

// Label is the change set's description (the user's request).
func (t *Tracker) Label() string { return t.label }

// BeforeWrite snapshots path unless it already was; only the first
// snapshot of a path counts, so the original state is what undo restores.
//
// The file is read outside the lock, so that the actors reading the
// tracker in their Receive (Changed, Snapshot) never wait for a disk. A
// second writer of the same path that read meanwhile keeps the first
// snapshot: whoever stores first read the file before any write to it,
// since every write of the change set passes here first.
func (t *Tracker) BeforeWrite(path string) error {
	t.mu.Lock()
	f, ok := t.files[path]
	if ok && f.Mode.Type() == 0 && !slices.Contains(t.order, path) {
		// A command changed it first: its snapshot is the state before
		// the change set, and it is now a file the change set wrote.
		t.order = append(t.order, path)
		t.found = without(t.found, path)
	}
	t.mu.Unlock()
	if ok {
		return nil
	}
	f, err := snapshotOf(fsutil.RootOf(path, t.root), path)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.files[path]; ok {
		return nil
	}
	t.files[path] = f
	t.order = append(t.order, path)
	return nil
}

// snapshotOf reads path's state before a change. It reads without
// following links and within a bound: a directory swapped for a symlink
// must not pull a file from elsewhere (or a device) into the snapshot.
func snapshotOf(root, path string) (*File, error) {
	f := &File{Path: path}
	info, err := fsutil.LstatIn(root, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("checkpoint: %w", err)
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("checkpoint: %s is not a regular file", path)
	default:
		data, _, err := fsutil.ReadFileIn(root, path, maxSnapshotBytes)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		f.Existed, f.Mode, f.Content = true, info.Mode().Perm(), data
	}
	return f, nil
}

// Changed lists the files the change set changed: those the write tools
// wrote, in first-write order, then those only commands changed (created,
// modified, deleted, or changed beyond what undo can restore), in the
// order they were found. Directories are left out. Both lists only grow
// (a command's file that a write tool writes later moves to the first),
// so a caller that accumulates the lists in order keeps each file where
// it first saw it, and the write tools' files keep the places they had
// before commands were counted.
func (t *Tracker) Changed() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.order)+len(t.found))
	out = append(out, t.order...)
	for _, p := range t.found {
		if t.files[p].Mode.Type() != fs.ModeDir {
			out = append(out, p)
		}
	}
	return out
}

// Snapshot returns a file's original content.
func (t *Tracker) Snapshot(path string) (content []byte, existed, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.files[path]
	if !ok {
		return nil, false, false
	}
	return f.Content, f.Existed, true
}

// Mode returns the permission bits a snapshotted file had (0 when it did
// not exist or is not in the change set).
func (t *Tracker) Mode(path string) fs.FileMode {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f, ok := t.files[path]; ok {
		return f.Mode
	}
	return 0
}

// Files returns copies of the snapshots; their after-hashes are the
// recorded intents plus the hash of each file as it is now.
func (t *Tracker) Files() []File {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]File, 0, len(t.order)+len(t.found))
	for _, p := range slices.Concat(t.order, t.found) {
		f := *t.files[p]
		f.AfterHashes = append([]string(nil), f.AfterHashes...)
		if f.Mode.Type() == 0 {
			if h := HashFile(p); h != "" {
				f.AfterHashes = appendHash(f.AfterHashes, h)
			}
		}
		out = append(out, f)
	}
	return out
}

// Diff renders the unified diff of paths against their snapshots, with
// paths relative to the root; files not in the change set are skipped.
func (t *Tracker) Diff(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		before, existed, ok := t.Snapshot(p)
		if !ok {
			continue
		}
		if line, shown := t.notShown(p); shown {
			b.WriteString(line)
			continue
		}
		after, err := t.readNow(p)
		if why, bad := unreadable(err); bad {
			b.WriteString(notShownLine(t.rel(p), why))
			continue
		}
		b.WriteString(t.unified(p, before, existed, after, err == nil))
	}
	return b.String()
}

// notShown is the one line that stands for an entry whose content the
// change set has no copy of (a command changed it past the limits, or on
// the read deny list: its snapshot says why) or that is a symbolic link,
// in place of a diff; shown is false for a regular file.
func (t *Tracker) notShown(p string) (line string, shown bool) {
	t.mu.Lock()
	f := t.files[p]
	t.mu.Unlock()
	switch {
	case f == nil || f.Mode.Type() == 0:
		return "", false
	case f.Mode.Type() == fs.ModeIrregular:
		return notShownLine(t.rel(p), string(f.Content)), true
	case f.Mode.Type() == fs.ModeSymlink:
		return notShownLine(t.rel(p), "it is a symbolic link"), true
	}
	return "", false
}

// unreadable says why a changed file's content now cannot be shown (too
// large, no longer a regular file, unreadable); bad is false when it was
// read or no longer exists. Such a file is still listed, as one line: a
// change the gates cannot read is a change all the same.
func unreadable(err error) (why string, bad bool) {
	switch {
	case err == nil || errors.Is(err, fs.ErrNotExist):
		return "", false
	case errors.Is(err, fsutil.ErrTooLarge):
		return "it is larger than " + sizeText(maxSnapshotBytes), true
	}
	return "it cannot be read now: " + err.Error(), true
}

// notShownLine is a diff's one-line entry for a changed file whose
// content is not shown.
func notShownLine(rel, why string) string {
	why = strings.Join(strings.Fields(why), " ")
	return fmt.Sprintf("Binary or too large, not shown: %s (%s)\n", rel, why)
}

// unified renders one file's diff, or git's one line for a binary file
// (a NUL byte in its first 8000 bytes, git's test), whose lines mean
// nothing to a reader and could be megabytes of noise in a brief.
func (t *Tracker) unified(p string, before []byte, existed bool, after []byte, exists bool) string {
	rel := t.rel(p)
	from, to := "a/"+rel, "b/"+rel
	if !existed {
		from = "/dev/null"
	}
	if !exists {
		to = "/dev/null"
	}
	if isBinary(before) || isBinary(after) {
		if bytes.Equal(before, after) && existed == exists {
			return ""
		}
		return fmt.Sprintf("Binary files %s and %s differ\n", from, to)
	}
	return udiff.Unified(from, to, string(before), string(after))
}

func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// DiffSince renders the unified diff of paths from the contents in since
// to their contents now, and returns those contents for the next call. A
// path absent from since is diffed from its snapshot (the whole change);
// a nil content stands for a file that did not exist. The quality gates'
// later rounds show only what changed after the round before them.
func (t *Tracker) DiffSince(paths []string, since map[string][]byte) (string, map[string][]byte) {
	var b strings.Builder
	now := make(map[string][]byte, len(paths))
	for _, p := range paths {
		before, existed, ok := t.Snapshot(p)
		if !ok {
			continue
		}
		// A file with no content to compare is shown as one line, its
		// stat standing for its content: a later round lists it again
		// only when it changed again.
		byStat := func(line string) {
			sig := statSig(fsutil.RootOf(p, t.root), p)
			if prev, seen := since[p]; !seen || !bytes.Equal(prev, sig) {
				b.WriteString(line)
			}
			now[p] = sig
		}
		if line, shown := t.notShown(p); shown {
			byStat(line)
			continue
		}
		if prev, seen := since[p]; seen && !bytes.HasPrefix(prev, sigPrefix) {
			// (A file shown last as a stat, too large then, is diffed
			// from its snapshot: there is no content to diff from.)
			before, existed = prev, prev != nil
		}
		after, err := t.readNow(p)
		if why, bad := unreadable(err); bad {
			byStat(notShownLine(t.rel(p), why))
			continue
		}
		if err == nil && after == nil {
			after = []byte{}
		}
		now[p] = after
		b.WriteString(t.unified(p, before, existed, after, after != nil))
	}
	return b.String(), now
}

// statSig stands for the content of a file DiffSince cannot read: its
// size, modification time and mode, marked with a NUL byte so that no
// text file's content equals it. A missing file has none.
func statSig(root, path string) []byte {
	info, err := fsutil.LstatIn(root, path)
	if err != nil {
		return nil
	}
	return fmt.Appendf(slices.Clone(sigPrefix), "%d %d %v", info.Size(), info.ModTime().UnixNano(), info.Mode())
}

var sigPrefix = []byte("\x00stat ")

// FileChanges describes paths for a CodeResult: modified and created files
// with their diffs and changed-line counts.
func (t *Tracker) FileChanges(paths []string) (modified, created []messages.FileChange) {
	for _, p := range paths {
		before, existed, ok := t.Snapshot(p)
		if !ok {
			continue
		}
		rel := t.rel(p)
		var diff string
		if line, shown := t.notShown(p); shown {
			diff = line
		} else if after, err := t.readNow(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			why, _ := unreadable(err)
			diff = notShownLine(rel, why)
		} else {
			// A file deleted since (a command removed it) diffs to
			// /dev/null, as in Diff.
			diff = t.unified(p, before, existed, after, !errors.Is(err, fs.ErrNotExist))
		}
		fc := messages.FileChange{Path: rel, Diff: diff, LinesChanged: changedLines(diff)}
		if existed {
			modified = append(modified, fc)
		} else {
			created = append(created, fc)
		}
	}
	return modified, created
}

func (t *Tracker) rel(p string) string {
	if r, err := filepath.Rel(t.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func changedLines(diff string) int {
	n := 0
	for _, line := range strings.Split(diff, "\n") {
		if (strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++")) ||
			(strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "---")) {
			n++
		}
	}
	return n
}

// readNow reads a changed file as it is now, with BeforeWrite's
// confinement and bound.
func (t *Tracker) readNow(path string) ([]byte, error) {
	data, _, err := fsutil.ReadFileIn(fsutil.RootOf(path, t.root), path, maxSnapshotBytes)
	return data, err
}

// HashFile returns the SHA-256 (hex) of a file's content, or "" when it
// does not exist or cannot be read. The path is resolved (as every path a
// change set records is), so no component may be a symlink, and the file
// is read only up to the snapshot bound.
func HashFile(path string) string {
	data, _, err := fsutil.ReadFileIn(string(filepath.Separator), path, maxSnapshotBytes)
	if err != nil {
		return ""
	}
	return hashBytes(data)
}

func hashBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

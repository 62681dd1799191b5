package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/odin-code/odin/internal/workspace"
)

// Limits bound what a Workspace keeps copies of. A file past them is still
// watched by its metadata (and hashed when it is not too large), so a
// command that changes it is reported as not restorable: undo never claims
// to restore what it has no copy of.
type Limits struct {
	// MaxFileBytes: a larger file gets no copy, nor a hash.
	MaxFileBytes int64
	// MaxFiles bounds the files and directories one scan visits, so a
	// huge tree costs a bounded walk; the rest (in walk order) is not
	// watched and the record says so.
	MaxFiles int
}

// DefaultLimits are the limits of a Workspace whose Limits are zero.
// MaxFileBytes is the bound of a write tool's snapshot, so a command's
// change is restorable exactly where a write tool's is.
var DefaultLimits = Limits{MaxFileBytes: maxSnapshotBytes, MaxFiles: 100_000}

// DefaultMaxBlobBytes is the default bound of a Blobs store.
const DefaultMaxBlobBytes = 512 << 20

// WorkspaceOptions configure NewWorkspace.
type WorkspaceOptions struct {
	// Root is the tree watched: absolute, clean, symlinks resolved.
	Root string
	// Blobs holds the copies; several Workspaces may share one (the
	// sessions of one process), each copy then stored once.
	Blobs *Blobs
	// Limits: zero fields take DefaultLimits'.
	Limits Limits
	// Hide, when set, is the read deny list: a file it hides is watched
	// without a copy (Odin keeps no copy of a credential), a directory it
	// hides is not walked.
	Hide func(path string, typ fs.FileMode) bool
	// Skip lists directories (absolute) never walked: Odin's own state.
	// .git directories are never walked either.
	Skip []string
}

// Workspace keeps the last known state of a directory tree — each file's
// metadata and, within the limits, a content-addressed copy of it — so
// that what a command changed can be found after it ran and undone: the
// checkpoint gets the content from before the command of every file it
// modified or deleted, and learns the files and directories it created.
//
// A scan walks the tree in a fixed order (names sorted, .gitignore and
// the other ignore files honoured as the search tools honour them, .git
// skipped) and reads only the files whose size, modification time, change
// time, inode or mode changed since the scan before, or whose last stat
// was too close to a change to trust (racyWindow): a repeated scan of an
// unchanged tree is a stat walk.
//
// Begin and End bracket one command; they may be called from several
// goroutines (commands of parallel agents) and are serialized. Changes
// seen while no command runs (the user's edits, Odin's write tools, which
// checkpoint their own writes) are taken as the new state, never
// attributed to a command.
type Workspace struct {
	opts WorkspaceOptions

	mu       sync.Mutex
	scanned  bool
	inflight int
	files    map[string]*wsFile
	dirs     map[string]fs.FileMode
	// cutoff is the last path the previous scan visited when it stopped
	// at MaxFiles ("" when it walked everything): a path after it that a
	// later scan sees is not new, it was merely unwatched.
	cutoff string
	// reads counts the files scans have read (for tests and benchmarks:
	// a scan of an unchanged tree reads none).
	reads atomic.Int64
	// now is the clock racy stats are judged by.
	now func() time.Time
}

type wsFile struct {
	stat fileStat
	// hash is the content's SHA-256 (hex), "" when the file was not read.
	hash string
	// kept: a copy of the content is in the blob store under hash.
	kept bool
	// why says why there is no copy.
	why string
	// racy: the file changed so close to the scan that stat'ed it that
	// a later change in the same timestamp tick could leave its stat as
	// it was, so the next scan reads it whatever its stat.
	racy bool
	// target is a symbolic link's target (stat.link), its content: a
	// link is watched as what it says, never followed.
	target string
}

// racyWindow: a file whose modification time is this close to the scan
// that stat'ed it may change again within the same timestamp tick without
// its metadata showing it, so the next scan reads it whatever its stat
// (as git treats "racily clean" index entries).
const racyWindow = 2 * time.Second

// NewWorkspace returns a Workspace that has not scanned yet; the first
// Begin scans the whole tree.
func NewWorkspace(opts WorkspaceOptions) (*Workspace, error) {
	if opts.Limits.MaxFileBytes <= 0 {
		opts.Limits.MaxFileBytes = DefaultLimits.MaxFileBytes
	}
	if opts.Limits.MaxFiles <= 0 {
		opts.Limits.MaxFiles = DefaultLimits.MaxFiles
	}
	if !filepath.IsAbs(opts.Root) || opts.Blobs == nil {
		return nil, fmt.Errorf("checkpoint: a workspace needs an absolute root (not %q) and a blob store", opts.Root)
	}
	return &Workspace{opts: opts, files: map[string]*wsFile{}, dirs: map[string]fs.FileMode{}, now: time.Now}, nil
}

// Root is the tree the Workspace watches.
func (w *Workspace) Root() string { return w.opts.Root }

// Close gives up the Workspace's copies.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.files {
		if f.kept {
			w.opts.Blobs.unref(f.hash)
		}
	}
	w.files, w.dirs = map[string]*wsFile{}, map[string]fs.FileMode{}
	w.scanned, w.cutoff = false, ""
	return nil
}

// Begin is called before a command runs. It brings the known state up to
// date and counts the command as running. What changed meanwhile is
// returned only when another command is running (it may be that
// command's doing); otherwise it is taken as the new state. A Begin that
// returns an error counts nothing.
func (w *Workspace) Begin(ctx context.Context) ([]File, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	found, err := w.scan(ctx, w.inflight > 0 && w.scanned)
	if err != nil {
		return nil, err
	}
	w.inflight++
	return found, nil
}

// End is called after a command that Begin counted, also when it failed.
// It returns what changed since the last scan: for each modified or
// deleted file its content and mode from before (or, without a copy, an
// entry with fs.ModeIrregular whose Content says why it cannot be
// restored), each created file with its hash, each created or deleted
// directory (fs.ModeDir, path ending in "/"). AfterHashes hold the
// contents the command left (Deleted for a removed file).
func (w *Workspace) End(ctx context.Context) ([]File, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inflight > 0 {
		w.inflight--
	}
	return w.scan(ctx, w.scanned)
}

// Abandon uncounts a command that Begin counted but that did not run.
func (w *Workspace) Abandon() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inflight > 0 {
		w.inflight--
	}
}

// seenFile is one regular file a walk found.
type seenFile struct {
	path string
	stat fileStat
}

// walkResult is what one walk found, in walk order.
type walkResult struct {
	files []seenFile
	dirs  map[string]fs.FileMode
	// cutoff is the last path visited when the walk stopped at MaxFiles.
	cutoff string
}

// errFull stops a walk at MaxFiles.
var errFull = errors.New("checkpoint: walk limit reached")

// walk visits the tree in sorted depth-first order.
func (w *Workspace) walk(ctx context.Context) (*walkResult, error) {
	res := &walkResult{dirs: map[string]fs.FileMode{}}
	rules := workspace.LoadRules(w.opts.Root, workspace.RulesOptions{})
	n := 0
	var visit func(dir string, rules *workspace.Rules, top bool) error
	visit = func(dir string, rules *workspace.Rules, top bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			// A directory that cannot be read is not watched (the search
			// tools skip it too); a vanished one is a deletion the caller
			// sees as such.
			return nil
		}
		if !top {
			rules = rules.Descend(dir, func(name string) bool {
				i := sort.Search(len(ents), func(i int) bool { return ents[i].Name() >= name })
				return i < len(ents) && ents[i].Name() == name
			})
		}
		for _, e := range ents {
			name := e.Name()
			if name == ".git" {
				continue
			}
			path := filepath.Join(dir, name)
			typ := e.Type()
			if typ.IsDir() && w.skipped(path) {
				continue
			}
			if typ.IsDir() && w.opts.Hide != nil && w.opts.Hide(path, typ) {
				continue
			}
			if !typ.IsDir() && !typ.IsRegular() && typ != fs.ModeSymlink {
				continue // sockets, devices, pipes: not watched
			}
			if rules.Match(path, typ.IsDir()) == workspace.MatchIgnore {
				continue
			}
			if n++; n > w.opts.Limits.MaxFiles {
				return errFull
			}
			res.cutoff = path
			if typ.IsDir() {
				fi, err := e.Info()
				if err != nil {
					continue
				}
				res.dirs[path] = fi.Mode().Perm()
				if err := visit(path, rules, false); err != nil {
					return err
				}
				continue
			}
			fi, err := e.Info() // lstat: a link is not followed
			if err != nil || !fi.Mode().IsRegular() && fi.Mode().Type() != fs.ModeSymlink {
				continue
			}
			res.files = append(res.files, seenFile{path: path, stat: statOf(fi)})
		}
		return nil
	}
	err := visit(w.opts.Root, rules, true)
	switch {
	case errors.Is(err, errFull):
	case err != nil:
		return nil, fmt.Errorf("checkpoint: scan %s: %w", w.opts.Root, err)
	default:
		res.cutoff = ""
	}
	return res, nil
}

func (w *Workspace) skipped(path string) bool {
	for _, s := range w.opts.Skip {
		if path == s {
			return true
		}
	}
	return path == w.opts.Blobs.dir
}

// after reports whether path comes after cutoff in walk order (a
// directory's entries right after it, before its next sibling).
func after(path, cutoff string) bool {
	if cutoff == "" {
		return false
	}
	for i := 0; i < len(path) && i < len(cutoff); i++ {
		a, b := path[i], cutoff[i]
		if a == b {
			continue
		}
		if a == '/' {
			return false
		}
		if b == '/' {
			return true
		}
		return a > b
	}
	return len(path) > len(cutoff)
}

// scan walks the tree, reads what changed and makes the result the known
// state. With record it returns the changes (see End).
func (w *Workspace) scan(ctx context.Context, record bool) ([]File, error) {
	// The store's directory is made on the first scan, where copies may
	// be taken (copyIn writes temporary files into it).
	if err := w.opts.Blobs.Ready(); err != nil {
		return nil, err
	}
	start := w.now()
	res, err := w.walk(ctx)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(res.files))
	var read []*pending
	next := make(map[string]*wsFile, len(res.files))
	for _, sf := range res.files {
		seen[sf.path] = true
		old := w.files[sf.path]
		if old != nil && old.stat.same(sf.stat) && !old.racy {
			next[sf.path] = old
			continue
		}
		read = append(read, &pending{path: sf.path, stat: sf.stat, old: old})
	}
	// A known file the walk missed may only be beyond the walk limit or
	// newly ignored: only one that is gone was deleted.
	var gone []string
	for path, old := range w.files {
		if seen[path] {
			continue
		}
		fi, err := os.Lstat(path)
		switch {
		case err == nil && (fi.Mode().IsRegular() || fi.Mode().Type() == fs.ModeSymlink):
			st := statOf(fi)
			if old.stat.same(st) && !old.racy {
				next[path] = old
			} else {
				read = append(read, &pending{path: path, stat: st, old: old})
			}
		case err == nil, errors.Is(err, fs.ErrNotExist):
			gone = append(gone, path)
		default:
			next[path] = old // unreadable now: keep what is known
		}
	}
	w.readAll(read, start)
	var found []File
	for _, p := range read {
		next[p.path] = p.now
		if !record {
			continue
		}
		if p.old == nil {
			if after(p.path, w.cutoff) {
				continue
			}
			found = append(found, w.created(p))
			continue
		}
		if f, changed := w.modified(p); changed {
			found = append(found, f)
		}
	}
	sort.Strings(gone)
	for _, path := range gone {
		if record {
			found = append(found, w.deleted(path, w.files[path]))
		}
	}
	dirs := res.dirs
	for d, perm := range w.dirs {
		if _, ok := dirs[d]; ok {
			continue
		}
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			dirs[d] = perm // beyond the walk limit, or ignored now
			continue
		}
		if record {
			found = append(found, File{Path: d + string(filepath.Separator), Existed: true, Mode: fs.ModeDir | perm})
		}
	}
	if record {
		for d, perm := range res.dirs {
			if _, known := w.dirs[d]; !known && !after(d, w.cutoff) {
				found = append(found, File{Path: d + string(filepath.Separator), Mode: fs.ModeDir | perm})
			}
		}
	}
	// The copies of contents no longer current go once the changes have
	// read them.
	for _, p := range read {
		if p.old != nil && p.old.kept {
			w.opts.Blobs.unref(p.old.hash)
		}
	}
	for _, path := range gone {
		if old := w.files[path]; old.kept {
			w.opts.Blobs.unref(old.hash)
		}
	}
	w.files, w.dirs, w.cutoff, w.scanned = next, dirs, res.cutoff, true
	sort.Slice(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	return found, nil
}

// pending is a file to read in a scan: its stat now, what was known of it
// and, once read, what is known now.
type pending struct {
	path string
	stat fileStat
	old  *wsFile
	now  *wsFile
}

// readAll reads the pending files, several at once: the first scan of a
// tree reads all of it.
func (w *Workspace) readAll(ps []*pending, start time.Time) {
	if len(ps) == 0 {
		return
	}
	workers := min(runtime.GOMAXPROCS(0), len(ps))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ps) {
					return
				}
				ps[i].now = w.read(ps[i].path, ps[i].stat, start)
			}
		}()
	}
	wg.Wait()
}

// read hashes one file and, within the limits, keeps a copy of it.
func (w *Workspace) read(path string, st fileStat, start time.Time) *wsFile {
	w.reads.Add(1)
	f := &wsFile{stat: st, racy: st.racy(start)}
	if st.link {
		target, err := os.Readlink(path)
		if err != nil {
			f.why = fmt.Sprintf("Odin could not read the link (%v)", err)
			return f
		}
		f.target, f.hash = target, linkHash(target)
		return f
	}
	lim := w.opts.Limits
	if st.size > lim.MaxFileBytes {
		f.why = fmt.Sprintf("it is %s, over the %s Odin copies per file", sizeText(st.size), sizeText(lim.MaxFileBytes))
		return f
	}
	keep := true
	if w.opts.Hide != nil && w.opts.Hide(path, 0) {
		keep, f.why = false, "it is on the read deny list, and Odin keeps no copy of such files"
	}
	hash, kept, err := w.copyIn(path, st.size, keep)
	if err != nil {
		f.why = fmt.Sprintf("Odin could not read it (%v)", err)
		return f
	}
	f.hash, f.kept = hash, kept
	if keep && !kept {
		f.why = fmt.Sprintf("Odin's copies of the workspace reached their %s limit", sizeText(w.opts.Blobs.max))
	}
	return f
}

// copyIn hashes path and, if keep and the store has room, stores its
// content under its hash. The file is opened without following a
// symbolic link and read up to MaxFileBytes: a file that grows past it
// while read gets no copy. A small file (most of a source tree) is read
// into memory and appended to the store's pack; a larger one is copied
// to a temporary file while hashed, then renamed to its copy's name.
func (w *Workspace) copyIn(path string, size int64, keep bool) (hash string, kept bool, err error) {
	src, err := openNoFollow(path)
	if err != nil {
		return "", false, err
	}
	defer src.Close()
	limit := w.opts.Limits.MaxFileBytes
	if size <= packMax {
		data, err := io.ReadAll(io.LimitReader(src, limit+1))
		if err != nil {
			return "", false, err
		}
		if int64(len(data)) > limit {
			return "", false, fmt.Errorf("it grew past %s while read", sizeText(limit))
		}
		hash = hashBytes(data)
		if !keep {
			return hash, false, nil
		}
		kept, err = w.opts.Blobs.putBytes(hash, data)
		return hash, kept, err
	}
	h := sha256.New()
	var tmp *os.File
	var dst io.Writer = h
	if keep {
		tmp, err = os.CreateTemp(w.opts.Blobs.dir, ".copy-*")
		if err != nil {
			return "", false, err
		}
		defer func() {
			tmp.Close()
			_ = os.Remove(tmp.Name())
		}()
		dst = io.MultiWriter(h, tmp)
	}
	n, err := io.Copy(dst, io.LimitReader(src, limit+1))
	if err != nil {
		return "", false, err
	}
	if n > limit {
		return "", false, fmt.Errorf("it grew past %s while read", sizeText(limit))
	}
	hash = hex.EncodeToString(h.Sum(nil))
	if !keep {
		return hash, false, nil
	}
	// The deferred removal of tmp then finds nothing, which is fine.
	kept, err = w.opts.Blobs.putFile(hash, n, func(name string) error { return os.Rename(tmp.Name(), name) })
	return hash, kept, err
}

// created is the record of a file the command created.
func (w *Workspace) created(p *pending) File {
	if p.now.hash == "" {
		return notRestorable(p.path, false, p.stat.perm, "a command created it, but "+p.now.why+"; undo leaves it")
	}
	return File{Path: p.path, Mode: p.stat.mode(), AfterHashes: []string{p.now.hash}}
}

// modified is the record of a file the command changed, and whether it
// did: a new stat over the same content and mode is no change.
func (w *Workspace) modified(p *pending) (File, bool) {
	old, now := p.old, p.now
	if old.hash != "" && old.hash == now.hash && old.stat.perm == now.stat.perm {
		return File{}, false
	}
	if old.stat.link {
		f := File{Path: p.path, Existed: true, Mode: old.stat.mode(), Content: []byte(old.target)}
		if now.hash != "" {
			f.AfterHashes = []string{now.hash}
		}
		return f, true
	}
	if !old.kept {
		why := old.why
		if why == "" {
			why = "Odin had no copy of it"
		}
		return notRestorable(p.path, true, old.stat.perm, "a command changed it, but "+why), true
	}
	data, err := w.content(old.hash)
	if err != nil {
		return notRestorable(p.path, true, old.stat.perm, "a command changed it, but "+err.Error()), true
	}
	f := File{Path: p.path, Existed: true, Mode: old.stat.perm, Content: data}
	if now.hash != "" {
		f.AfterHashes = []string{now.hash}
	}
	return f, true
}

// deleted is the record of a file the command removed.
func (w *Workspace) deleted(path string, old *wsFile) File {
	if old.stat.link && old.hash != "" {
		return File{Path: path, Existed: true, Mode: old.stat.mode(), Content: []byte(old.target), AfterHashes: []string{Deleted}}
	}
	if !old.kept {
		why := old.why
		if why == "" {
			why = "Odin had no copy of it"
		}
		return notRestorable(path, true, old.stat.perm, "a command deleted it, but "+why)
	}
	data, err := w.content(old.hash)
	if err != nil {
		return notRestorable(path, true, old.stat.perm, "a command deleted it, but "+err.Error())
	}
	return File{Path: path, Existed: true, Mode: old.stat.perm, Content: data, AfterHashes: []string{Deleted}}
}

// notRestorable is the record of a change undo cannot take back: its
// Content says why.
func notRestorable(path string, existed bool, perm fs.FileMode, why string) File {
	return File{Path: path, Existed: existed, Mode: fs.ModeIrregular | perm, Content: []byte(why)}
}

// sizeText renders a byte count for a message.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
	case n >= 1<<10:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<10)), ".0") + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

// content reads a kept copy back, checked against its hash: a copy that
// does not match is not restored from.
func (w *Workspace) content(hash string) ([]byte, error) {
	return w.opts.Blobs.read(hash)
}

// mode is the File mode of a scanned entry: its permission bits, with
// fs.ModeSymlink for a link.
func (s fileStat) mode() fs.FileMode {
	if s.link {
		return fs.ModeSymlink | s.perm
	}
	return s.perm
}

// linkHash is what a symbolic link to target is known by in AfterHashes:
// "link:" and the SHA-256 of the target, so that no file's content can
// pass for a link.
func linkHash(target string) string { return "link:" + hashBytes([]byte(target)) }

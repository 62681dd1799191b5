package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Blobs is a content-addressed store of file copies in a private
// directory, each counted by the Workspaces that use it and dropped when
// none does. Small contents (most of a source tree) are appended to one
// pack file, since creating a file per copy costs the first scan of a
// large tree more than reading it; larger ones get a file each. The pack
// is rewritten without the dropped contents once they are most of it.
// It is safe for concurrent use.
type Blobs struct {
	dir string
	max int64

	// OnUnavailable, when set before first use, is told once why the
	// directory or the pack could not be made.
	OnUnavailable func(error)
	// made makes the directory and the pack on first use (Ready): most
	// processes run no command, and creating and removing them was ~1%
	// of a short `odin run`'s CPU (inodes made and freed, a discard).
	made    sync.Once
	madeErr error

	// packMu is held for reading while the pack is written or read and
	// for writing while it is rewritten; it is taken before mu.
	packMu sync.RWMutex
	pack   *os.File

	mu      sync.Mutex
	blobs   map[string]*blob
	total   int64 // bytes of the contents held
	packEnd int64 // where the next content goes in the pack
	garbage int64 // bytes of the pack no content uses
	// compactAt: the pack is rewritten once this much of it is unused
	// (and that is more than half of it).
	compactAt int64
}

type blob struct {
	size int64
	refs int
	off  int64 // offset in the pack; -1 for a file of its own
}

// packMax: a content up to this size goes in the pack.
const packMax = 256 << 10

// compactMin is a store's compactAt.
const compactMin = 32 << 20

// ErrUnavailable is returned (wrapped) by the first use of a store whose
// directory could not be made.
var ErrUnavailable = errors.New("checkpoint: no place for copies of the workspace")

// errClosed is Ready's error after Close.
var errClosed = errors.New("checkpoint: the copies' store is closed")

// NewBlobs returns a store in dir holding at most maxBytes (0:
// DefaultMaxBlobBytes). The directory must belong to this store alone; it
// is emptied (copies a dead process left are of no use: the state they
// belonged to was in its memory) and made when the store is first used.
func NewBlobs(dir string, maxBytes int64) (*Blobs, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("checkpoint: blob directory %q is not absolute", dir)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBlobBytes
	}
	return &Blobs{dir: dir, max: maxBytes, blobs: map[string]*blob{}, compactAt: compactMin}, nil
}

// Ready makes the store's directory and pack if that was not done yet; an
// error (wrapping ErrUnavailable) is the same at every call.
func (b *Blobs) Ready() error {
	b.made.Do(func() {
		pack, err := makeBlobDir(b.dir)
		if err != nil {
			b.madeErr = fmt.Errorf("%w: %w", ErrUnavailable, err)
			if b.OnUnavailable != nil {
				b.OnUnavailable(b.madeErr)
			}
			return
		}
		b.pack = pack
	})
	return b.madeErr
}

// makeBlobDir empties and makes dir and opens its new pack.
func makeBlobDir(dir string) (*os.File, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, "pack"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// Close removes the store's directory, if it was made; the store cannot
// be used after.
func (b *Blobs) Close() error {
	// A store never used is never made now.
	b.made.Do(func() { b.madeErr = errClosed })
	b.packMu.Lock()
	defer b.packMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blobs, b.total, b.packEnd, b.garbage = map[string]*blob{}, 0, 0, 0
	if b.pack == nil {
		return nil
	}
	// A use after Close finds no pack: *os.File's methods report a nil
	// one as invalid.
	_ = b.pack.Close()
	b.pack = nil
	return os.RemoveAll(b.dir)
}

// Bytes is the size of the contents held.
func (b *Blobs) Bytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// reserve counts one more use of hash's copy (exists) or makes room for
// a new one of n bytes (at off in the pack when packed); ok is false when
// the store is full.
func (b *Blobs) reserve(hash string, n int64, packed bool) (exists, ok bool, off int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bl, found := b.blobs[hash]; found {
		bl.refs++
		return true, true, bl.off
	}
	if b.total+n > b.max {
		return false, false, 0
	}
	off = -1
	if packed {
		off = b.packEnd
		b.packEnd += n
	}
	b.blobs[hash] = &blob{size: n, refs: 1, off: off}
	b.total += n
	return false, true, off
}

// putBytes keeps data as hash's copy in the pack; kept is false when the
// store is full or the write failed. A use counted for a copy whose
// write then failed finds it damaged when it reads it, and says so.
func (b *Blobs) putBytes(hash string, data []byte) (kept bool, err error) {
	if err := b.Ready(); err != nil {
		return false, err
	}
	b.packMu.RLock()
	defer b.packMu.RUnlock()
	exists, ok, off := b.reserve(hash, int64(len(data)), true)
	if exists || !ok {
		return ok, nil
	}
	if _, err := b.pack.WriteAt(data, off); err != nil {
		b.unrefLocked(hash)
		return false, err
	}
	return true, nil
}

// putFile keeps a copy of n bytes in a file of its own, made by create
// given its name.
func (b *Blobs) putFile(hash string, n int64, create func(name string) error) (kept bool, err error) {
	if err := b.Ready(); err != nil {
		return false, err
	}
	exists, ok, _ := b.reserve(hash, n, false)
	if exists || !ok {
		return ok, nil
	}
	if err := create(filepath.Join(b.dir, hash)); err != nil {
		b.unref(hash)
		return false, err
	}
	return true, nil
}

// read returns hash's copy, checked against its hash.
func (b *Blobs) read(hash string) ([]byte, error) {
	b.packMu.RLock()
	defer b.packMu.RUnlock()
	b.mu.Lock()
	bl, ok := b.blobs[hash]
	var size, off int64
	if ok {
		size, off = bl.size, bl.off
	}
	b.mu.Unlock()
	if !ok {
		return nil, errors.New("the copy of it is gone from the snapshots")
	}
	var data []byte
	var err error
	if off < 0 {
		data, err = os.ReadFile(filepath.Join(b.dir, hash))
	} else {
		data = make([]byte, size)
		_, err = b.pack.ReadAt(data, off)
	}
	if err != nil {
		return nil, fmt.Errorf("the copy of it in the snapshots could not be read: %w", err)
	}
	if hashBytes(data) != hash {
		return nil, errors.New("the copy of it in the snapshots is damaged")
	}
	return data, nil
}

// unref drops one use of hash's copy, and the copy with the last.
func (b *Blobs) unref(hash string) {
	if b.unrefLocked(hash) {
		b.compact()
	}
}

// unrefLocked is unref without the compaction (callers holding packMu);
// it reports whether the pack should be compacted.
func (b *Blobs) unrefLocked(hash string) (compact bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bl, ok := b.blobs[hash]
	if !ok {
		return false
	}
	if bl.refs--; bl.refs > 0 {
		return false
	}
	delete(b.blobs, hash)
	b.total -= bl.size
	if bl.off < 0 {
		_ = os.Remove(filepath.Join(b.dir, hash))
		return false
	}
	b.garbage += bl.size
	if b.garbage == b.packEnd {
		// Nothing in the pack is used (a session closed): it starts
		// over. Contents reserved meanwhile would be counted in packEnd.
		if b.pack.Truncate(0) == nil {
			b.packEnd, b.garbage = 0, 0
		}
		return false
	}
	return b.garbage >= b.compactAt && 2*b.garbage > b.packEnd
}

// compact rewrites the pack with only the contents still used. A failure
// leaves the old pack in place (it only wastes space).
func (b *Blobs) compact() {
	b.packMu.Lock()
	defer b.packMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.garbage < b.compactAt || 2*b.garbage <= b.packEnd {
		return
	}
	name := filepath.Join(b.dir, "pack")
	next, err := os.OpenFile(name+".new", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	var live []*blob
	for _, bl := range b.blobs {
		if bl.off >= 0 {
			live = append(live, bl)
		}
	}
	slices.SortFunc(live, func(x, y *blob) int { return int(x.off - y.off) })
	offs := make([]int64, len(live))
	var end int64
	buf := make([]byte, 0, packMax)
	for i, bl := range live {
		buf = buf[:bl.size]
		if _, err := b.pack.ReadAt(buf, bl.off); err != nil {
			next.Close()
			_ = os.Remove(next.Name())
			return
		}
		if _, err := next.WriteAt(buf, end); err != nil {
			next.Close()
			_ = os.Remove(next.Name())
			return
		}
		offs[i] = end
		end += bl.size
	}
	if err := os.Rename(next.Name(), name); err != nil {
		next.Close()
		_ = os.Remove(next.Name())
		return
	}
	_ = b.pack.Close()
	b.pack = next
	for i, bl := range live {
		bl.off = offs[i]
	}
	b.packEnd, b.garbage = end, 0
}

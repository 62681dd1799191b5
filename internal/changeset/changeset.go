package changeset

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/store"
)

// Sets makes one checkpoint per turn that changes files. With a nil
// Store the snapshots stay in memory (a session without a store).
type Sets struct {
	// Root is the project root the change sets belong to.
	Root string
	// Store persists them; nil keeps them in memory only.
	Store store.Store
	// Session is the session the change sets are recorded under.
	Session string
}

// Begin starts the change set of one turn; nothing reaches the store
// until its first write.
func (c *Sets) Begin(label string) *Tracker {
	return &Tracker{Tracker: checkpoint.NewTracker(c.Root, label), sets: c, label: label}
}

// Commit records the after-hashes of the files t wrote. A change set that
// wrote nothing, or one of another kind (nil), records nothing.
func (c *Sets) Commit(ctx context.Context, t *Tracker) error {
	if t == nil || c.Store == nil {
		return nil
	}
	t.mu.Lock()
	id := t.checkpointID
	t.mu.Unlock()
	if id == "" {
		return nil // nothing was written
	}
	hashes := map[string]string{}
	for _, f := range t.Files() {
		hashes[f.Path] = checkpoint.JoinHashes(f.AfterHashes)
	}
	return c.Store.SetAfterHashes(ctx, id, hashes)
}

// Tracker is one turn's change set: a checkpoint.Tracker that persists
// each snapshot as it is taken.
type Tracker struct {
	*checkpoint.Tracker
	sets  *Sets
	label string

	mu           sync.Mutex
	checkpointID string
}

// BeforeWrite snapshots path before its first change and saves the
// snapshot to the store; an error aborts the write.
func (t *Tracker) BeforeWrite(path string) error {
	fresh := false
	if _, _, ok := t.Snapshot(path); !ok {
		fresh = true
	}
	if err := t.Tracker.BeforeWrite(path); err != nil || !fresh || t.sets.Store == nil {
		return err
	}
	content, existed, _ := t.Snapshot(path)
	// The write waits for this and must not be cut short by the turn's
	// cancel: a file changed without its snapshot could not be undone.
	ctx := context.Background()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.checkpointID == "" {
		cp, err := t.sets.Store.CreateCheckpoint(ctx, store.Checkpoint{SessionID: t.sets.Session, Project: t.sets.Root, Label: t.label})
		if err != nil {
			t.Tracker.Forget(path)
			return fmt.Errorf("checkpoint: %w", err)
		}
		t.checkpointID = cp.ID
	}
	mode := t.Tracker.Mode(path)
	_, err := t.sets.Store.AddSnapshot(ctx, t.checkpointID, store.FileSnapshot{Path: path, Existed: existed, Mode: mode, Content: content})
	if err != nil {
		// The write is aborted; the next attempt must snapshot (and
		// persist) again rather than find an in-memory snapshot only.
		t.Tracker.Forget(path)
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// IntendWrite records the content about to be written, in memory and in
// the store, before the write: undo after a crash then knows Odin's
// after-state. An error aborts the write.
func (t *Tracker) IntendWrite(path string, content []byte) error {
	if err := t.Tracker.IntendWrite(path, content); err != nil || t.sets.Store == nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.checkpointID == "" {
		return fmt.Errorf("checkpoint: no change set holds %s", path)
	}
	hashes := map[string]string{path: checkpoint.JoinHashes(t.Tracker.Intents(path))}
	if err := t.sets.Store.SetAfterHashes(context.Background(), t.checkpointID, hashes); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// IntendDelete records, in memory and in the store, that path is about
// to be removed (an isolated specialist's patch deleted it), so that undo
// after a crash restores it rather than take it for someone else's change.
func (t *Tracker) IntendDelete(path string) error {
	if err := t.Tracker.IntendDelete(path); err != nil || t.sets.Store == nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.checkpointID == "" {
		return fmt.Errorf("checkpoint: no change set holds %s", path)
	}
	hashes := map[string]string{path: checkpoint.JoinHashes(t.Tracker.Intents(path))}
	if err := t.sets.Store.SetAfterHashes(context.Background(), t.checkpointID, hashes); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// ErrNothing is returned by Undo when the project has no change set left
// to undo.
var ErrNothing = errors.New("nothing to undo")

// Undo restores the newest change set of the project at root that was not
// undone, writing only beneath roots (see Roots), and marks it undone at
// now. force restores files someone else changed since. The message says
// what happened to each file, paths relative to root.
func Undo(ctx context.Context, st store.Store, root string, roots []string, force bool, now time.Time) (string, error) {
	cp, err := st.LatestUnrestored(ctx, root)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%w in %s", ErrNothing, root)
	}
	if err != nil {
		return "", err
	}
	snaps, err := st.Snapshots(ctx, cp.ID)
	if err != nil {
		return "", err
	}
	files := make([]checkpoint.File, len(snaps))
	for i, s := range snaps {
		files[i] = checkpoint.File{Path: s.Path, Existed: s.Existed, Mode: s.Mode, Content: s.Content, AfterHashes: checkpoint.SplitHashes(s.HashAfter)}
	}
	outcomes, err := checkpoint.Restore(files, roots, force)
	if err != nil {
		return "", err
	}
	if err := st.MarkRestored(ctx, cp.ID, now); err != nil {
		return "", err
	}
	return undoMessage(cp, outcomes, root), nil
}

func undoMessage(cp store.Checkpoint, outcomes []checkpoint.Outcome, root string) string {
	n := 0
	for _, o := range outcomes {
		if o.Action != "unchanged" {
			n++
		}
	}
	files := fmt.Sprintf("%d files", n)
	if n == 1 {
		files = "1 file"
	}
	when := cp.CreatedAt.Local().Format("2006-01-02 15:04")
	msg := fmt.Sprintf("Restored %s from the change set %q (%s):", files, cp.Label, when)
	if n == 0 {
		msg = fmt.Sprintf("Nothing to restore: the change set %q (%s) was interrupted before any of its writes landed; it is marked as undone:", cp.Label, when)
	}
	for _, o := range outcomes {
		rel, err := filepath.Rel(root, o.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = o.Path
		}
		var verb string
		switch {
		case o.Action == "unchanged" && !o.Existed:
			verb = "was never created (the change was interrupted before writing it); nothing to remove"
		case o.Action == "unchanged":
			verb = "already as before the change (it was interrupted before writing it); left as is"
		case o.Action == "removed":
			verb = "removed (it was created by the change)"
		case o.State == checkpoint.StateChanged:
			verb = "restored over someone else's later changes (--force)"
		default:
			verb = "restored"
		}
		msg += fmt.Sprintf("\n  %s %s", rel, verb)
	}
	return msg
}

// Roots are the directories undo writes beneath: the project root and
// dirs (--add-dir, permissions.additional_dirs; relative ones against
// root), each resolved as the path guard resolves them. Missing ones are
// left out.
func Roots(root string, dirs []string) []string {
	roots := []string{root}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			roots = append(roots, r)
		}
	}
	return roots
}

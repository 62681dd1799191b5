package changeset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	// Workspace, when set, watches the project for what commands change
	// (see Tracker.BeforeCommand); nil leaves commands unrecorded.
	Workspace *checkpoint.Workspace
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
// snapshot to the store, with the directories the write will create for
// it (undo removes them again); an error aborts the write.
func (t *Tracker) BeforeWrite(path string) error {
	fresh := false
	if _, _, ok := t.Snapshot(path); !ok {
		fresh = true
	}
	var dirs []checkpoint.File
	if fresh {
		dirs = checkpoint.CreatedDirs(t.sets.Root, path)
	}
	if err := t.Tracker.BeforeWrite(path); err != nil || !fresh || t.sets.Store == nil {
		if err == nil && len(dirs) > 0 {
			t.Tracker.Record(dirs)
		}
		return err
	}
	if len(dirs) > 0 {
		if err := t.record(context.Background(), dirs); err != nil {
			t.Tracker.Forget(path)
			return err
		}
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

// BeforeCommand snapshots the workspace before a command runs in root and
// returns the function to call after it (also when it failed), which
// records in the change set what the command changed: the content before
// it of each file it modified or deleted, the files and directories it
// created, and the changes Odin had no copy of (reported by undo as not
// restorable). after returns the files (not directories) the command
// changed, so the call can report them as a write tool reports its own.
// Both save to the store before they return, so a turn reported done has
// its checkpoint stored. A command in another root (an isolated worktree,
// whose changes come back as a patch through BeforeWrite) or a change set
// without a store or workspace is not watched: after is nil then, as when
// the workspace's copies have no place (checkpoint.ErrUnavailable, told
// to the store's OnUnavailable). An error means nothing was snapshotted and
// the command must not run.
func (t *Tracker) BeforeCommand(ctx context.Context, root string) (after func(context.Context) ([]string, error), err error) {
	ws := t.sets.Workspace
	if ws == nil || t.sets.Store == nil || filepath.Clean(root) != ws.Root() {
		return nil, nil
	}
	found, err := ws.Begin(ctx)
	if errors.Is(err, checkpoint.ErrUnavailable) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if err := t.record(context.WithoutCancel(ctx), found); err != nil {
		ws.Abandon()
		return nil, err
	}
	return func(ctx context.Context) ([]string, error) {
		found, err := ws.End(ctx)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		var changed []string
		for _, f := range found {
			if f.Mode.Type() != fs.ModeDir {
				changed = append(changed, f.Path)
			}
		}
		// Changed files are reported even when they could not be
		// recorded: the gates must still see them, undo is what fails.
		return changed, t.record(ctx, found)
	}, nil
}

// record adds found entries to the change set and saves them: new ones
// as snapshots (in one transaction where the store batches), and the new
// after-hashes of paths it held already. An entry that could not be saved
// is dropped from memory too.
func (t *Tracker) record(ctx context.Context, found []checkpoint.File) error {
	if len(found) == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.checkpointID == "" {
		cp, err := t.sets.Store.CreateCheckpoint(ctx, store.Checkpoint{SessionID: t.sets.Session, Project: t.sets.Root, Label: t.label})
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		t.checkpointID = cp.ID
	}
	added, merged := t.Tracker.Record(found)
	save := func(ctx context.Context) error {
		for _, f := range added {
			_, err := t.sets.Store.AddSnapshot(ctx, t.checkpointID, store.FileSnapshot{Path: f.Path, Existed: f.Existed,
				Mode: f.Mode, Content: f.Content, HashAfter: checkpoint.JoinHashes(f.AfterHashes)})
			if err != nil {
				return err
			}
		}
		if len(merged) == 0 {
			return nil
		}
		hashes := make(map[string]string, len(merged))
		for _, p := range merged {
			hashes[p] = checkpoint.JoinHashes(t.Tracker.Intents(p))
		}
		return t.sets.Store.SetAfterHashes(ctx, t.checkpointID, hashes)
	}
	if err := store.InBatch(ctx, t.sets.Store, save); err != nil {
		for _, f := range added {
			t.Tracker.Forget(f.Path)
		}
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
		if !o.Dir && o.Action != "unchanged" && o.Action != checkpoint.ActionNotRestorable {
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
		if changedSomething(outcomes) {
			msg = fmt.Sprintf("Restored no file from the change set %q (%s); it is marked as undone:", cp.Label, when)
		}
	}
	for _, o := range outcomes {
		msg += "\n  " + RelPath(root, o.Path) + " " + OutcomeText(o)
	}
	return msg
}

// changedSomething reports whether an outcome other than a file's
// "unchanged" happened (a directory removed, a change not restorable).
func changedSomething(outcomes []checkpoint.Outcome) bool {
	for _, o := range outcomes {
		if o.Dir && o.Action != "unchanged" || o.Action == checkpoint.ActionNotRestorable {
			return true
		}
	}
	return false
}

// RelPath shows path relative to root when it is beneath it; a
// directory keeps its trailing separator.
func RelPath(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	if strings.HasSuffix(path, string(filepath.Separator)) {
		rel += string(filepath.Separator)
	}
	return rel
}

// OutcomeText says what undo did with one entry, for the user.
func OutcomeText(o checkpoint.Outcome) string {
	switch {
	case o.Action == checkpoint.ActionNotRestorable:
		return "NOT restored: " + o.Reason
	case o.Dir && o.Action == "removed":
		return "removed (the change created this directory)"
	case o.Dir && o.Action == checkpoint.ActionRecreated:
		return "recreated (the change removed this directory)"
	case o.Dir && o.Action == checkpoint.ActionKept:
		return "kept: the change created this directory, but " + o.Reason
	case o.Dir:
		return "already as before the change; left as is"
	case o.Action == "unchanged" && !o.Existed:
		return "was never created (the change was interrupted before writing it); nothing to remove"
	case o.Action == "unchanged":
		return "already as before the change (it was interrupted before writing it); left as is"
	case o.Action == "removed":
		return "removed (it was created by the change)"
	case o.State == checkpoint.StateChanged:
		return "restored over someone else's later changes (--force)"
	}
	return "restored"
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

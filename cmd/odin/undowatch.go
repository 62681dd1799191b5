package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/workspace"
)

// snapshotsDir holds, under the state directory, one directory per Odin
// process with the copies of the workspace its sessions' command
// checkpoints compare against (checkpoint.Blobs). They are a cache for the
// process's lifetime: the checkpoints themselves are in the session store.
const snapshotsDir = "snapshots"

// commandBlobs is the process's store of workspace copies, shared by its
// sessions so that each content is copied once; nil without a state
// directory (commands are then not checkpointed, as when its directory
// cannot be made at the first command). It is removed when the app
// closes; the directories of processes that died are swept when the next
// process makes its own.
func (a *app) commandBlobs() *checkpoint.Blobs {
	a.blobsOnce.Do(func() {
		if a.stateDir == "" {
			return
		}
		parent := filepath.Join(a.stateDir, snapshotsDir)
		sweepSnapshots(parent)
		b, err := checkpoint.NewBlobs(filepath.Join(parent, strconv.Itoa(os.Getpid())), 0)
		if err != nil {
			a.log.Warn().Err(err).Msg("undo: commands' changes will not be checkpointed")
			return
		}
		log := a.log
		b.OnUnavailable = func(err error) {
			log.Warn().Err(err).Msg("undo: commands' changes will not be checkpointed")
		}
		a.blobs = b
		a.closers = append(a.closers, b)
	})
	return a.blobs
}

// sweepSnapshots removes the copies of Odin processes that are gone.
func sweepSnapshots(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// commandWorkspace returns a new watch of the project for one session's
// command checkpoints, or nil when there is no place for its copies.
// Odin's own directories inside the project are not watched, nor is what
// the read deny list hides (watched without a copy).
func (a *app) commandWorkspace() *checkpoint.Workspace {
	blobs := a.commandBlobs()
	if blobs == nil {
		return nil
	}
	skip := []string{filepath.Join(a.root, ".odin")}
	for _, d := range []string{a.stateDir, a.userDir, a.dataDir} {
		if d != "" && workspace.Within(a.root, d) {
			skip = append(skip, d)
		}
	}
	ws, err := checkpoint.NewWorkspace(checkpoint.WorkspaceOptions{Root: a.root, Blobs: blobs, Hide: a.denyRead.Hides, Skip: skip})
	if err != nil {
		a.log.Warn().Err(err).Msg("undo: commands' changes will not be checkpointed")
		return nil
	}
	return ws
}

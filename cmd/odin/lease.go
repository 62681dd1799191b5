package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/odin-code/odin/internal/store"
)

// exitBusy is the exit code of a command refused because another odin
// process is running the session it asked for.
const exitBusy = 4

// takeLease makes this process the session's only writer. The lease lives
// next to the database (a flock under <state dir>/locks), is released by
// liveSession.Close, and by the kernel if odin dies. A session held
// elsewhere is refused with the holder named and exit code exitBusy.
func (a *app) takeLease(id string) (*store.Lease, error) {
	l, err := store.AcquireLease(filepath.Dir(a.dbPath()), id)
	var busy *store.BusyError
	if errors.As(err, &busy) {
		return nil, &exitError{code: exitBusy, err: fmt.Errorf("%w; wait for it to finish or stop it, then try again (one process writes a session at a time)", busy)}
	}
	if err != nil {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("session %s: %w (is the state directory read-only or full? run `odin doctor`)", id, err)}
	}
	return l, nil
}

// dbPath is where openStore opens the database ("" when there is no state
// directory, which openStore reports).
func (a *app) dbPath() string {
	if a.cfg.Store.Path != "" {
		return a.cfg.Store.Path
	}
	if a.stateDir == "" {
		return ""
	}
	return filepath.Join(a.stateDir, "odin.db")
}

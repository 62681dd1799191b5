package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/odin-code/odin/actors"
)

// exitNotSaved is the exit code of a run whose answer was given but could
// not be written to the session store (a full disk, a read-only database).
const exitNotSaved = 5

// closeSession closes live and turns a persistence failure into
// exitNotSaved; otherwise it returns err, the run's own outcome.
func closeSession(live *liveSession, err error) error {
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cerr := live.Close(cctx)
	var taken *actors.TakenOverError
	if errors.As(cerr, &taken) {
		// Another process owns the session now (exit 4, as for a
		// session in use when the run started).
		return &exitError{code: exitBusy, err: fmt.Errorf("%v; what this run did after that is not in session %s (its new owner carries on)", taken, live.ID)}
	}
	if !errors.Is(cerr, actors.ErrNotSaved) {
		return err
	}
	msg := fmt.Sprintf("%v; session %s misses the end of this turn (odin run -c will continue without it): free space in the state directory or check the database with `odin doctor`", cerr, live.ID)
	if err != nil {
		msg = err.Error() + "; and " + msg
	}
	return &exitError{code: exitNotSaved, err: errors.New(msg)}
}

// storeOpenError explains a database that cannot be opened: it is not a
// usage error (exit 1, not 2), and `odin doctor` is where to look next.
func storeOpenError(path string, err error) error {
	return &exitError{code: exitFailed, err: fmt.Errorf("cannot open the session database %s: %w (is it read-only, on a full disk, or damaged? run `odin doctor`)", path, err)}
}

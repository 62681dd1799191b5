package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/changeset"
	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// openStore opens the session database (store.path, default
// $XDG_STATE_HOME/odin/odin.db). The app closes it.
func (a *app) openStore(ctx context.Context) (store.Store, error) {
	if a.st != nil {
		return a.st, nil
	}
	path := a.cfg.Store.Path
	if path == "" {
		if a.stateDir == "" && a.cfg.Store.URL == "" {
			return nil, fmt.Errorf("no state directory: set XDG_STATE_HOME or HOME, or store.path in odin.yaml")
		}
		path = filepath.Join(a.stateDir, "odin.db")
	}
	// store.url, when set, chooses the store; store.path is a file path
	// in any case, so it goes through the same entry point as one.
	target, fail := path, func(err error) error { return storeOpenError(path, err) }
	if u := a.cfg.Store.URL; u != "" {
		target, fail = u, func(err error) error { return storeURLError(u, a.src.Origin("store.url"), err) }
	} else if abs, err := filepath.Abs(path); err == nil {
		target = abs
	}
	if a.stores != nil {
		st, release, err := a.stores.acquire(ctx, target)
		if err != nil {
			return nil, fail(err)
		}
		a.st = st
		a.closers = append(a.closers, release)
		return st, nil
	}
	st, err := store.OpenURL(ctx, target)
	if err != nil {
		return nil, fail(err)
	}
	a.st = st
	a.closers = append(a.closers, st)
	return st, nil
}

// sessionOptions say which session to run and how it asks for approval.
type sessionOptions struct {
	// Continue resumes the project's latest session; Resume a given one.
	Continue bool
	Resume   string
	// Purpose is what the latest session is wanted for, in the error when
	// there is none ("compact"); empty: "continue", as for -c.
	Purpose string
	// Stored is Resume's row when the caller has read it already (a
	// cluster worker checks it before loading the project): resuming
	// reads it neither to resolve the ID nor to check it again.
	Stored *store.Session
	// Pick asks the user which session to resume (odin --resume, no ID).
	Pick bool
	// Interactive sessions ask the user through the bus; others never wait.
	Interactive bool
	// Mode is recorded on a new session.
	Mode string
	// NoElicit, when set, is why an interactive session's front end
	// cannot answer MCP servers' requests for input (ACP has no forms):
	// they are declined with it.
	NoElicit string
}

// liveSession is a running session and what the front end needs of it.
type liveSession struct {
	ID       string
	Session  *actors.Session
	Bus      *events.Bus
	Deps     *actors.Deps
	Approver *policy.BusApprover // nil for headless sessions
	// Elicitor asks MCP servers' questions through the bus; nil when the
	// front end cannot (headless, ACP).
	Elicitor *mcp.BusElicitor
	// Resumed is true when an existing session was continued.
	Resumed bool
	// ModelNotice says which main model a resumed session runs on and
	// why, when that is not simply the configured one (restoreModel);
	// empty otherwise. Front ends show it; it is logged too.
	ModelNotice string
	// lease makes this process the session's only writer.
	lease *store.Lease
	// workspace watches the project for the session's command
	// checkpoints; nil when commands are not checkpointed.
	workspace *checkpoint.Workspace
	// Recovery holds the turns a dead process left unfinished; resume
	// runs them once the front end listens.
	Recovery   actors.Recovery
	resumeOnce sync.Once
}

// resume runs the recovered turns (once) and returns how many.
func (l *liveSession) resume() int {
	n := 0
	l.resumeOnce.Do(func() {
		l.Session.Resume(l.Recovery)
		n = l.Recovery.Resuming()
	})
	return n
}

// submit queues an input under a new ID kept in the store's input ledger,
// so that a crash mid-turn leaves it to be resumed by the next open. If
// the ledger cannot be written the input still runs, as before the
// ledger; the journal then reports the store's trouble.
func (l *liveSession) submit(body string, mode messages.Mode, images []messages.Image) messages.UserMessage {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	acc, err := l.Session.Accept(ctx, "", body, mode, images)
	if err != nil {
		l.Deps.Log.Warn().Err(err).Msg("input ledger: the input runs without being recorded")
		return l.Session.SubmitImages(body, mode, images)
	}
	return acc.Input
}

// Close stops the session, writes what it still holds, then gives up the
// session's lease.
func (l *liveSession) Close(ctx context.Context) error {
	err := l.Session.Close(ctx)
	if l.workspace != nil {
		_ = l.workspace.Close()
	}
	_ = l.lease.Release()
	return err
}

// startSession opens the store, creates or resumes the session and starts
// its Orchestrator.
func (a *app) startSession(ctx context.Context, o sessionOptions) (*liveSession, error) {
	// The first model call needs the catalogue (context window, price):
	// indexing it overlaps opening the store.
	go a.catalog()
	if o.Resume == "" && !o.Continue {
		// A new session's first request carries a repo map: it is built
		// while the session starts (and, in the REPL, while the user
		// types), not after the first message.
		if pool := a.repoMaps(); pool != nil {
			pool.For(a.root).Prewarm(a.repoMapCtx, 3*time.Second)
		}
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	// Leftovers of a writer killed mid-write (.NAME.odin-PID-*.tmp) at the
	// root go now; deeper ones go when Odin next writes in their directory.
	_ = fsutil.CleanStaleTemps(a.root, a.root)
	id, resumed := "", false
	var history []store.Message
	switch {
	case o.Stored != nil:
		id, resumed = o.Stored.ID, true
	case o.Resume != "":
		full, err := resolveResume(ctx, st, o.Resume)
		if err != nil {
			return nil, err
		}
		s, err := st.Session(ctx, full)
		if err != nil {
			return nil, err
		}
		if s.ParentID != "" {
			return nil, usageError("session %s is a specialist's transcript; resume its parent %s", s.ID, s.ParentID)
		}
		id, resumed = s.ID, true
	case o.Continue:
		s, err := st.LatestSession(ctx, a.root)
		if errors.Is(err, store.ErrNotFound) {
			if o.Purpose != "" {
				return nil, usageError("no session to %s in %s", o.Purpose, a.root)
			}
			return nil, usageError("no previous session in %s to continue", a.root)
		}
		if err != nil {
			return nil, err
		}
		id, resumed = s.ID, true
	}
	// created is the session made here: a start that fails after it (a
	// bad --allow pattern or hook found by buildDeps) removes it, or every
	// such error left an empty session in odin sessions.
	created, base := "", st
	if !resumed {
		model := a.currentModel("main")
		s, err := st.CreateSession(ctx, store.Session{ID: newID(), Project: a.root, Agent: store.AgentOrchestrator, Mode: o.Mode, Model: model})
		if err != nil {
			return nil, err
		}
		id, created = s.ID, s.ID
	}
	// The local lease first (SQLite: the fast path, one writer per
	// session on this host), then the claim, which fences any other
	// writer wherever it runs, then the read, which sees every write the
	// previous owner will ever make. A PostgreSQL store is shared by
	// hosts, where the flock means nothing: opening a session another
	// process holds takes it over, and that process stops at its next
	// write.
	var lease *store.Lease
	if _, shared := st.(*store.Postgres); !shared {
		if lease, err = a.takeLease(id); err != nil {
			return nil, err
		}
	}
	ok := false
	// A session that fails to open leaves the main model as it found it
	// (restoreModel below switches it for the process).
	prevMain := a.roleModel("main")
	defer func() {
		if !ok {
			if created != "" {
				_ = base.DeleteSession(context.WithoutCancel(ctx), created)
			}
			_ = lease.Release()
			a.setRole("main", prevMain)
		}
	}()
	st, err = claimSession(ctx, st, id)
	if err != nil {
		return nil, err
	}
	var recovery actors.Recovery
	var modelNotice string
	if resumed {
		// Turns a dead process left unfinished are settled first, through
		// the claim: a partial reply marked interrupted is then out of
		// the history read for the model below.
		if recovery, err = actors.RecoverInputs(ctx, st, id); err != nil {
			return nil, fmt.Errorf("recover interrupted turns: %w", err)
		}
		// Read after taking the lease and the claim: the previous writer is done.
		history, err = st.Messages(ctx, id)
		if err != nil {
			return nil, err
		}
		// The model kept with the session, read after the claim too: a
		// /model the previous owner stored is in it.
		rec, err := st.Session(ctx, id)
		if err != nil {
			return nil, err
		}
		if modelNotice = a.restoreModel(rec.Model); modelNotice != "" {
			a.log.Info().Str("session", id).Str("stored_model", rec.Model).Msg("session model: " + modelNotice)
		}
	}
	var busApprover *policy.BusApprover
	approver := a.headlessApprover()
	bus := events.New(id, nil)
	var elicitor *mcp.BusElicitor
	if o.Interactive {
		busApprover = policy.NewBusApprover(bus, newID)
		approver = busApprover
		if o.NoElicit == "" {
			elicitor = mcp.NewBusElicitor(bus, newID)
		}
	}
	// The app's MCP servers ask the newest session's user (a REPL's
	// /resume moves them on; serve and ACP give each session its app).
	a.mu.Lock()
	a.elicitor, a.elicitNoWhy = elicitor, o.NoElicit
	a.sampleApprover = policy.NewMemory(approver)
	a.mu.Unlock()
	deps, err := a.buildDeps(bus, approver)
	if err != nil {
		return nil, err
	}
	a.startMCP(ctx)
	deps.Store = st
	deps.Editor = a.editor
	if busApprover != nil {
		// A runaway specialist is paused and the user asked; headless
		// runs stop it.
		deps.Approver = busApprover
	}
	ws := a.commandWorkspace()
	deps.Changes = newChangeSets(a.root, st, id, ws)
	sopts := actors.SessionOptions{ID: id, History: store.LLMMessages(history)}
	if a.actors != nil {
		sopts.System = a.actors.get(a.log)
	}
	sess, err := actors.NewSession(deps, sopts)
	if err != nil {
		if ws != nil {
			_ = ws.Close()
		}
		return nil, err
	}
	ok = true
	return &liveSession{ID: id, Session: sess, Bus: bus, Deps: deps, Approver: busApprover, Elicitor: elicitor, Resumed: resumed, ModelNotice: modelNotice, lease: lease, Recovery: recovery, workspace: ws}, nil
}

// claimSession claims the session for this process (store.Claimer) and
// returns the claim, through which every write of the session then goes;
// a store that cannot claim is returned as it is.
func claimSession(ctx context.Context, st store.Store, id string) (store.Store, error) {
	c, ok := st.(store.Claimer)
	if !ok {
		return st, nil
	}
	h, err := c.Claim(ctx, id, claimNode())
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return h, nil
}

// claimNode names this process in a session's owner column: host and PID.
func claimNode() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// changeSets adapts changeset.Sets to actors.ChangeSets: nothing below
// cmd imports actors, so its interfaces are met here.
type changeSets struct{ sets *changeset.Sets }

func newChangeSets(root string, st store.Store, session string, ws *checkpoint.Workspace) changeSets {
	return changeSets{&changeset.Sets{Root: root, Store: st, Session: session, Workspace: ws}}
}

func (c changeSets) Begin(_ context.Context, _ string, label string) actors.ChangeTracker {
	return c.sets.Begin(label)
}

func (c changeSets) Commit(ctx context.Context, ct actors.ChangeTracker) error {
	t, _ := ct.(*changeset.Tracker)
	return c.sets.Commit(ctx, t)
}

// undo restores the newest change set of the project that was not undone.
func (a *app) undo(ctx context.Context, force bool) (string, error) {
	st, err := a.openStore(ctx)
	if err != nil {
		return "", err
	}
	return changeset.Undo(ctx, st, a.root, a.undoRoots(), force, time.Now())
}

// undoRoots are the directories undo writes beneath: the project and the
// directories added with --add-dir or permissions.additional_dirs.
func (a *app) undoRoots() []string {
	dirs := append([]string(nil), a.flags.addDirs...)
	if a.cfg != nil {
		dirs = append(dirs, a.cfg.Permissions.AdditionalDirs...)
	}
	return changeset.Roots(a.root, dirs)
}

// storeURLError reports a store.url that does not open, naming the key,
// the layer that set it (the user's odin.yaml, env ODIN_STORE_URL or
// flags) and the URL without its password.
func storeURLError(url, origin string, err error) error {
	return &exitError{code: exitFailed, err: fmt.Errorf("cannot open the session store store.url=%s (set by %s): %w", store.RedactURL(url), origin, err)}
}

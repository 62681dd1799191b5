package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/logging"
	"github.com/odin-code/odin/tools/tool"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

// sessionOpener starts sessions for the protocol front ends (odin acp,
// odin serve) the way the REPL does: startSession with an interactive
// approver. Each session gets its own app, so that its directory is its
// project with that project's configuration, trust, sandbox and policy.
type sessionOpener struct {
	g      *globalFlags
	stores *storePool
	actors *actorPool
}

func newSessionOpener(g *globalFlags) sessionOpener {
	return sessionOpener{g: g, stores: &storePool{}, actors: &actorPool{}}
}

// Close shuts down the actor system the sessions shared; call it after
// every session is closed.
func (o sessionOpener) Close() { o.actors.shutdown() }

// actorPool is the one actor system of a front end's sessions: each
// session's Orchestrator and specialists are actors in it, under their
// own names, instead of each session starting (and paying for) a system
// of its own. Safe for concurrent use.
type actorPool struct {
	mu  sync.Mutex
	sys *actor.ActorSystem
}

// get returns the system, starting it on first use with log as
// protoactor's log.
func (p *actorPool) get(log zerolog.Logger) *actor.ActorSystem {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sys == nil {
		p.sys = actors.NewActorSystem(logging.Slog(log.With().Str("component", "protoactor").Logger()))
	}
	return p.sys
}

func (p *actorPool) shutdown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sys != nil {
		p.sys.Shutdown()
		p.sys = nil
	}
}

// frontOptions are what a front end brings to a session beyond its
// project: the editor's buffers and MCP servers (odin acp).
type frontOptions struct {
	// Editor, when set, is where the file tools read and write.
	Editor tool.Editor
	// Terminal, when set, is where commands run (in Odin's sandbox).
	Terminal tools.CommandTerminal
	// MCPServers are servers the editor declares for the session, by
	// name. They are the user's own (the editor is the user's tool), so
	// they need no trust and their env may carry secrets, like servers in
	// the user's config; one named like a configured server replaces it.
	MCPServers map[string]config.MCPServer
	// NoElicit, when set, is why MCP servers' requests for input are
	// declined (sessionOptions.NoElicit).
	NoElicit string
}

// open starts a new session of the project at dir, or resumes the stored
// session resume.
func (o sessionOpener) open(ctx context.Context, dir, resume string, fo frontOptions) (*frontSession, error) {
	g := *o.g
	if dir != "" {
		g.dir = dir
	}
	a, err := loadApp(&g)
	if err != nil {
		return nil, err
	}
	a.stores = o.stores
	a.actors = o.actors
	a.editor = fo.Editor
	a.terminal = fo.Terminal
	if len(fo.MCPServers) > 0 {
		servers := maps.Clone(a.cfg.MCP.Servers)
		if servers == nil {
			servers = map[string]config.MCPServer{}
		}
		a.editorMCP = map[string]bool{}
		for name, srv := range fo.MCPServers {
			if _, dup := servers[name]; dup {
				a.log.Info().Str("mcp_server", name).Msg("the editor's MCP server replaces the configured one of the same name")
			}
			servers[name] = srv
			a.editorMCP[name] = true
		}
		a.cfg.MCP.Servers = servers
	}
	if err := a.checkProvider(); err != nil {
		a.Close()
		return nil, err
	}
	live, err := a.startSession(ctx, sessionOptions{Interactive: true, Resume: resume, Mode: a.cfg.Mode, NoElicit: fo.NoElicit})
	if err != nil {
		a.Close()
		return nil, err
	}
	return &frontSession{a: a, live: live}, nil
}

// frontSession is a live session with its app, as the front ends use it.
type frontSession struct {
	a    *app
	live *liveSession
}

func (s *frontSession) ID() string { return s.live.ID }

func (s *frontSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	return s.live.Session.Submit(body, mode)
}

func (s *frontSession) SubmitImages(body string, mode messages.Mode, images []messages.Image) messages.UserMessage {
	return s.live.Session.SubmitImages(body, mode, images)
}

func (s *frontSession) Cancel(reason string) { s.live.Session.Cancel(reason) }

// Accept is serve's idempotent submit (serve.Accepter).
func (s *frontSession) Accept(ctx context.Context, key, body string, mode messages.Mode) (messages.UserMessage, string, bool, error) {
	acc, err := s.live.Session.Accept(ctx, key, body, mode, nil)
	return acc.Input, acc.State, acc.Dup, err
}

// Resume runs the turns a crash interrupted (serve.Resumer).
func (s *frontSession) Resume() int { return s.live.resume() }

func (s *frontSession) Bus() *events.Bus { return s.live.Bus }

// JournalQueued is for serve's metrics (serve.JournalQueuer).
func (s *frontSession) JournalQueued() int { return s.live.Session.JournalStats().Queued }

func (s *frontSession) Answer(id string, d policy.Decision) error {
	return s.live.Approver.Answer(id, d)
}

func (s *frontSession) Pending() []messages.ApprovalRequested { return s.live.Approver.Pending() }

// AnswerElicitation answers an MCP server's request for input
// (serve.Elicitor).
func (s *frontSession) AnswerElicitation(id, action string, content map[string]any) error {
	if s.live.Elicitor == nil {
		return fmt.Errorf("%w: %q (this session declines them)", mcp.ErrUnknownElicitation, id)
	}
	err := s.live.Elicitor.Answer(id, action, content)
	if errors.Is(err, mcp.ErrInvalidAnswer) {
		return fmt.Errorf("%w: %w", serve.ErrInvalidAnswer, err)
	}
	return err
}

// PendingElicitations lists the requests for input waiting for an answer
// (serve.Elicitor).
func (s *frontSession) PendingElicitations() []messages.ElicitationRequested {
	if s.live.Elicitor == nil {
		return nil
	}
	return s.live.Elicitor.Pending()
}

func (s *frontSession) Queue(ctx context.Context) (*messages.QueueState, error) {
	return s.live.Session.Queue(ctx)
}

func (s *frontSession) Remove(ctx context.Context, id string) (*messages.QueueState, error) {
	return s.live.Session.Remove(ctx, id)
}

// history is the stored conversation, for replay.
func (s *frontSession) history(ctx context.Context) ([]llm.Message, error) {
	// Through the session's claim: Messages may repair, which is a write.
	h, err := s.live.Deps.Store.Messages(ctx, s.live.ID)
	if err != nil {
		return nil, err
	}
	return store.LLMMessages(h), nil
}

// Close stops the session (cancelling its turn and persisting it), gives up
// its lease and closes its app.
func (s *frontSession) Close(ctx context.Context) error {
	err := s.live.Close(ctx)
	s.a.Close()
	return err
}

// storePool shares one open store per database file among the sessions of
// a front end that serves many at once (odin serve, odin acp): one SQLite
// writer per file in the process, instead of one per session queuing on
// the file lock — with a hundred sessions a newcomer could wait past the
// busy timeout. Safe for concurrent use.
type storePool struct {
	mu   sync.Mutex
	open map[string]*pooledStore
}

type pooledStore struct {
	st   store.Store
	refs int
}

// acquire returns the store of path (a file path or store URL), opening it
// on first use, and the closer that releases this use; the last release
// closes the store.
func (p *storePool) acquire(ctx context.Context, path string) (store.Store, io.Closer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ps, ok := p.open[path]
	if !ok {
		st, err := store.OpenURL(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		if p.open == nil {
			p.open = map[string]*pooledStore{}
		}
		// Grouped: the journals of many sessions share commits
		// instead of queuing one by one on SQLite's one writer
		// connection (PostgreSQL runs their transactions side by side).
		if lite, ok := st.(*store.SQLite); ok {
			st = store.NewGrouped(lite)
		}
		ps = &pooledStore{st: st}
		p.open[path] = ps
	}
	ps.refs++
	var once sync.Once
	release := closerFunc(func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if ps.refs--; ps.refs == 0 {
				delete(p.open, path)
				_ = ps.st.Close()
			}
		})
	})
	return ps.st, release, nil
}

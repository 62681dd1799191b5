package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// Session is a running Odin session as the ACP agent uses it: the
// front-end side of actors.Session plus its bus and approver.
type Session interface {
	// ID is the store's session ID, used as the ACP session ID.
	ID() string
	// SubmitImages queues an input, with the images attached to it, in
	// the Orchestrator's mailbox.
	SubmitImages(body string, mode messages.Mode, images []messages.Image) messages.UserMessage
	// Cancel cancels the running turn; queued inputs stay queued.
	Cancel(reason string)
	// Queue returns the running input and the queue.
	Queue(ctx context.Context) (*messages.QueueState, error)
	// Remove withdraws a queued input and returns the queue after it.
	Remove(ctx context.Context, id string) (*messages.QueueState, error)
	// SetMode records the session's mode in the store, so that a later
	// session/load, in any process, starts in it.
	SetMode(ctx context.Context, m messages.Mode) error
	// Bus carries the session's events.
	Bus() *events.Bus
	// Answer answers a pending approval request.
	Answer(id string, d policy.Decision) error
	// Commands are the session's slash commands (the project's, the
	// user's and the plugins' custom commands).
	Commands() []Command
	// Compact summarises the older history now and says what it did; it
	// fails while a turn runs.
	Compact(ctx context.Context) (string, error)
	// Title is the session's stored title, empty until it has one.
	Title(ctx context.Context) (string, error)
	// ContextWindow is the Orchestrator's model's context window in
	// tokens, 0 when unknown.
	ContextWindow() int
	// Models returns the model the session's Orchestrator uses now and
	// the models it may switch to (the configured ones).
	Models() (current string, available []string)
	// SetModel records model id with the session, so that a later
	// session/load or session/resume, in any process, starts in it, and
	// makes the Orchestrator use it from its next turn.
	SetModel(ctx context.Context, id string) error
	// Close stops the session and persists it.
	Close(ctx context.Context) error
}

// Opener starts sessions for the agent.
type Opener interface {
	// New starts a new session for the project at cwd.
	New(ctx context.Context, cwd string, o OpenOptions) (Session, error)
	// Load resumes a stored session in its stored model (when the
	// configuration still offers it) and returns what it had: its history
	// to replay and its mode.
	Load(ctx context.Context, id, cwd string, o OpenOptions) (Session, Loaded, error)
	// List returns the stored sessions of the project at cwd (every
	// project's when cwd is empty), most recently updated first.
	List(ctx context.Context, cwd string) ([]StoredSession, error)
}

// StoredSession is a stored session as session/list shows it.
type StoredSession struct {
	ID, Cwd, Title string
	UpdatedAt      time.Time
}

// Loaded is what a stored session brings back.
type Loaded struct {
	// History is the conversation, for replay.
	History []llm.Message
	// Mode is the mode last set, empty when none was stored.
	Mode messages.Mode
	// Cost is what the session has spent so far, in US dollars.
	Cost float64
}

// Options configure an Agent.
type Options struct {
	Opener Opener
	// Mode is the initial mode of a session (ask, plan or edit).
	Mode    messages.Mode
	Version string
	Log     *slog.Logger
}

// Agent implements the agent side of ACP over Odin sessions.
type Agent struct {
	opts Options
	conn *sdk.AgentSideConnection
	out  *afterWrite

	mu       sync.Mutex
	sessions map[string]*liveSession
	// fs is what the client offered of its file system in initialize;
	// terminal says whether it offered terminal/*.
	fs       sdk.FileSystemCapabilities
	terminal bool
}

var (
	_ sdk.Agent       = (*Agent)(nil)
	_ sdk.AgentLoader = (*Agent)(nil)
)

// Serve runs the agent on the connection (r, w) until the client
// disconnects or ctx ends, then closes every session it started.
func Serve(ctx context.Context, opts Options, r io.Reader, w io.Writer) error {
	if opts.Mode == "" {
		opts.Mode = messages.ModeEdit
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	a := &Agent{opts: opts, sessions: map[string]*liveSession{}, out: &afterWrite{w: w, pending: map[string]func(){}}}
	a.conn = sdk.NewAgentSideConnection(a, a.out, newLineFilter(r, a.out))
	a.conn.SetLogger(opts.Log)
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	return a.closeAll()
}

func (a *Agent) closeAll() error {
	a.mu.Lock()
	all := a.sessions
	a.sessions = map[string]*liveSession{}
	a.mu.Unlock()
	var errs []error
	for _, s := range all {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

// Initialize implements sdk.Agent.
func (a *Agent) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.mu.Lock()
	a.fs = p.ClientCapabilities.Fs
	a.terminal = p.ClientCapabilities.Terminal
	a.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession: true,
			// The client's MCP servers are run by Odin's MCP client, which
			// speaks stdio, Streamable HTTP and SSE.
			McpCapabilities: sdk.McpCapabilities{Http: true, Sse: true},
			// Embedded resources (files the editor attaches) are passed to
			// the model as fenced text, images as images (refused, turn by
			// turn, for a model that takes none); audio is not supported.
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List:   &sdk.SessionListCapabilities{},
				Resume: &sdk.SessionResumeCapabilities{},
				Close:  &sdk.SessionCloseCapabilities{},
			},
		},
		AgentInfo:   &sdk.Implementation{Name: "odin", Version: a.opts.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate implements sdk.Agent; Odin's providers are configured in
// odin.yaml, so there is nothing to authenticate.
func (a *Agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession implements sdk.Agent.
func (a *Agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	o, err := a.openOptions(p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(err.Error())
	}
	s, err := a.opts.Opener.New(ctx, p.Cwd, o)
	if err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(err.Error())
	}
	o.setSession(s.ID())
	// The connection's mode is the session's, recorded so that a load
	// starts in it rather than in the configuration's.
	if err := s.SetMode(ctx, a.opts.Mode); err != nil {
		_ = s.Close(context.WithoutCancel(ctx))
		return sdk.NewSessionResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	ls := a.add(s, a.opts.Mode, o, p.Cwd)
	a.out.after(sessionMarker(s.ID()), func() { ls.send(context.Background(), []sdk.SessionUpdate{ls.commandsUpdate()}) })
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(s.ID()), Modes: ls.modeState(), Models: ls.modelState(), ConfigOptions: ls.configOptions()}, nil
}

// LoadSession implements sdk.AgentLoader: the stored history is replayed as
// session/update notifications before the response.
func (a *Agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	ls, err := a.reopen(ctx, p.SessionId, p.Cwd, p.McpServers, true)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	return sdk.LoadSessionResponse{Modes: ls.modeState(), Models: ls.modelState(), ConfigOptions: ls.configOptions()}, nil
}

// ResumeSession implements sdk.Agent: session/load without the replay, for
// a client that still shows the conversation.
func (a *Agent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	ls, err := a.reopen(ctx, p.SessionId, p.Cwd, p.McpServers, false)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	return sdk.ResumeSessionResponse{Modes: ls.modeState(), Models: ls.modelState(), ConfigOptions: ls.configOptions()}, nil
}

// reopen opens the stored session id in its stored mode, replaying its
// history first when asked, and sends its commands: the client knows the
// session's ID, so they precede the response.
func (a *Agent) reopen(ctx context.Context, id sdk.SessionId, cwd string, servers []sdk.McpServer, withReplay bool) (*liveSession, error) {
	if err := checkCwd(cwd); err != nil {
		return nil, err
	}
	a.mu.Lock()
	_, running := a.sessions[string(id)]
	a.mu.Unlock()
	if running {
		return nil, sdk.NewInvalidParams(fmt.Sprintf("session %s is already open on this connection", id))
	}
	o, err := a.openOptions(servers)
	if err != nil {
		return nil, sdk.NewInvalidParams(err.Error())
	}
	o.setSession(string(id))
	s, l, err := a.opts.Opener.Load(ctx, string(id), cwd, o)
	if err != nil {
		return nil, sdk.NewInvalidParams(err.Error())
	}
	if withReplay {
		for _, u := range replay(cwd, l.History) {
			if err := a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: id, Update: u}); err != nil {
				_ = s.Close(context.WithoutCancel(ctx))
				return nil, err
			}
		}
	}
	mode := a.opts.Mode
	if l.Mode != "" {
		mode = l.Mode
	}
	ls := a.add(s, mode, o, cwd)
	ls.mu.Lock()
	ls.cost = l.Cost
	ls.mu.Unlock()
	ls.send(ctx, []sdk.SessionUpdate{ls.commandsUpdate()})
	return ls, nil
}

// openOptions is what a session of this connection gets from the client:
// its fs methods and its terminals, if it offered any, and its MCP
// servers.
func (a *Agent) openOptions(servers []sdk.McpServer) (OpenOptions, error) {
	o := OpenOptions{calls: newAnnouncer(), cards: newTerminalCards()}
	m, err := mcpServers(servers)
	if err != nil {
		return o, err
	}
	o.MCPServers = m
	a.mu.Lock()
	fs, term := a.fs, a.terminal
	a.mu.Unlock()
	if fs.ReadTextFile || fs.WriteTextFile {
		o.Editor = &EditorFS{conn: a.conn, read: fs.ReadTextFile, write: fs.WriteTextFile, calls: o.calls}
	}
	if term {
		o.Terminal = &EditorTerminal{conn: a.conn, calls: o.calls, cards: o.cards}
	}
	return o, nil
}

// setSession tells the editor's fs and terminals the session's ID.
func (o OpenOptions) setSession(id string) {
	if o.Editor != nil {
		o.Editor.setSession(id)
	}
	if o.Terminal != nil {
		o.Terminal.setSession(id)
	}
}

// CloseSession implements sdk.Agent.
func (a *Agent) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	a.mu.Lock()
	s, ok := a.sessions[string(p.SessionId)]
	delete(a.sessions, string(p.SessionId))
	a.mu.Unlock()
	if !ok {
		return sdk.CloseSessionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("unknown session %s", p.SessionId))
	}
	return sdk.CloseSessionResponse{}, s.close()
}

// ListSessions implements sdk.Agent: the stored sessions of the project at
// cwd (every project's without one), most recently updated first, a page
// at a time (listPage sessions) with a cursor to the next.
func (a *Agent) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	cwd := ""
	if p.Cwd != nil {
		cwd = *p.Cwd
		if err := checkCwd(cwd); err != nil {
			return sdk.ListSessionsResponse{}, err
		}
	}
	stored, err := a.opts.Opener.List(ctx, cwd)
	if err != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(err.Error())
	}
	pg, next, err := listPageAfter(stored, p.Cursor, listPage)
	if err != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(err.Error())
	}
	out := make([]sdk.SessionInfo, 0, len(pg))
	for _, s := range pg {
		info := sdk.SessionInfo{SessionId: sdk.SessionId(s.ID), Cwd: s.Cwd, UpdatedAt: sdk.Ptr(s.UpdatedAt.UTC().Format(time.RFC3339))}
		if s.Title != "" {
			info.Title = sdk.Ptr(s.Title)
		}
		out = append(out, info)
	}
	return sdk.ListSessionsResponse{Sessions: out, NextCursor: next}, nil
}

// listPage is how many sessions one session/list response holds.
const listPage = 50

// listCursor is where a session/list page ended: its last session, by
// ID and update time. It is a position in the order, not an offset, so
// that a session created or updated while the client pages (which moves
// it to the front) shifts nothing: later pages hold no session twice and
// skip none that stayed put (but for one updated in the very nanosecond
// of a cursor whose own session has moved since).
type listCursor struct {
	ID      string `json:"id"`
	Updated int64  `json:"u"`
}

// listPageAfter returns the page of all (most recently updated first)
// after cursor, at most size long, and the cursor of the page after it,
// nil at the end. A cursor this agent did not make is an error.
func listPageAfter(all []StoredSession, cursor *string, size int) ([]StoredSession, *string, error) {
	start := 0
	if cursor != nil {
		raw, err := base64.RawURLEncoding.DecodeString(*cursor)
		var c listCursor
		if err == nil {
			err = json.Unmarshal(raw, &c)
		}
		if err != nil || c.ID == "" {
			return nil, nil, fmt.Errorf("invalid session/list cursor %q: pass the nextCursor of a previous response, or none for the first page", *cursor)
		}
		start = len(all)
		for i, s := range all {
			if s.ID == c.ID && s.UpdatedAt.UnixNano() == c.Updated {
				start = i + 1
				break
			}
			// The cursor's session was updated (or deleted) since: go on
			// with the first one older than it was.
			if s.UpdatedAt.UnixNano() < c.Updated {
				start = i
				break
			}
		}
	}
	end := min(start+size, len(all))
	if end >= len(all) {
		return all[start:], nil, nil
	}
	last := all[end-1]
	b, err := json.Marshal(listCursor{ID: last.ID, Updated: last.UpdatedAt.UnixNano()})
	if err != nil {
		return nil, nil, err
	}
	return all[start:end], sdk.Ptr(base64.RawURLEncoding.EncodeToString(b)), nil
}

// SetSessionConfigOption implements sdk.Agent: the mode and the model as
// config options, set as session/set_mode and session/set_model set them
// (stored with the session). The response lists every option; the legacy
// mode state follows with a current_mode_update.
func (a *Agent) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams("odin's session config options (mode, model) take a value id")
	}
	s, err := a.session(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	switch v.ConfigId {
	case configMode:
		if err := a.setMode(ctx, s, string(v.Value)); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
		s.send(ctx, []sdk.SessionUpdate{{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(v.Value)}}})
	case configModel:
		if err := a.setModel(ctx, s, string(v.Value)); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
	default:
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("unknown config option %q (odin offers %s and %s)", v.ConfigId, configMode, configModel))
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions()}, nil
}

// SetSessionMode implements sdk.Agent: the mode applies to later prompts.
// The mode config option follows with a config_option_update.
func (a *Agent) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	if err := a.setMode(ctx, s, string(p.ModeId)); err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	s.send(ctx, []sdk.SessionUpdate{s.configUpdate()})
	return sdk.SetSessionModeResponse{}, nil
}

// setMode makes id the session's mode, stored first: a mode the next
// process would not see is not set.
func (a *Agent) setMode(ctx context.Context, s *liveSession, id string) error {
	m, err := messages.ParseMode(id)
	if err != nil {
		return sdk.NewInvalidParams(err.Error())
	}
	if err := s.s.SetMode(ctx, m); err != nil {
		return sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
	return nil
}

// UnstableSetSessionModel implements session/set_model (offered through
// the models of the session/new response): the Orchestrator uses the
// model from its next turn on. The model config option follows with a
// config_option_update.
func (a *Agent) UnstableSetSessionModel(ctx context.Context, p sdk.UnstableSetSessionModelRequest) (sdk.UnstableSetSessionModelResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	if err := a.setModel(ctx, s, string(p.ModelId)); err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	s.send(ctx, []sdk.SessionUpdate{s.configUpdate()})
	return sdk.UnstableSetSessionModelResponse{}, nil
}

// setModel switches the session to one of the models it offers.
func (a *Agent) setModel(ctx context.Context, s *liveSession, id string) error {
	_, available := s.s.Models()
	if !slices.Contains(available, id) {
		return sdk.NewInvalidParams(fmt.Sprintf("unknown model %q (the session offers %s)", id, strings.Join(available, ", ")))
	}
	if err := s.s.SetModel(ctx, id); err != nil {
		return sdk.NewInvalidParams(err.Error())
	}
	return nil
}

// Cancel implements sdk.Agent: the prompts this connection queued behind
// the running turn are withdrawn, then the running turn is cancelled;
// each session/prompt answers with stopReason "cancelled", after the
// updates of its turn. Withdrawing first keeps a queued prompt from
// starting in the moment the cancelled turn ends.
func (a *Agent) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	s, err := a.session(p.SessionId)
	if err != nil {
		return err
	}
	s.withdrawQueued(ctx)
	s.s.Cancel("cancelled by the editor")
	return nil
}

// Prompt implements sdk.Agent. A prompt sent while a turn runs waits in the
// Orchestrator's queue; each prompt answers when its own turn ends.
func (a *Agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	body, images, err := promptText(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(err.Error())
	}
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	if c, args, ok := s.slashCommand(body); ok {
		if c.Expand == nil {
			return s.compact(ctx), nil
		}
		var m messages.Mode
		body, m = c.Expand(args)
		if m != "" {
			mode = m
		}
	}
	ch := make(chan messages.TurnResult, 1)
	s.mu.Lock()
	m := s.s.SubmitImages(body, mode, images)
	s.waiting[m.ID] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiting, m.ID)
		s.mu.Unlock()
	}()
	// ctx is not watched: the SDK cancels a session's earlier prompt when
	// the next one arrives, yet that one waits in the queue behind it.
	// Only session/cancel cancels; a closed connection closes the
	// session (s.done).
	//
	// The response names the input: the pump holds the next turn back
	// until it is written (afterWrite).
	meta := map[string]any{inputMetaKey: m.ID}
	select {
	case res := <-ch:
		u := turnUsage(res.Usage)
		switch res.Status {
		case messages.TurnDone, messages.TurnGateFailed:
			return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn, Usage: u, Meta: meta}, nil
		case messages.TurnCancelled:
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled, Usage: u, Meta: meta}, nil
		}
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"status": string(res.Status), "error": res.Error, inputMetaKey: m.ID})
	case <-s.done:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled, Meta: meta}, nil
	}
}

// turnUsage is a turn's tokens as the prompt response reports them, nil
// for a turn that called no model.
func turnUsage(u messages.Usage) *sdk.Usage {
	if u.TotalTokens == 0 && u.PromptTokens == 0 && u.CompletionTokens == 0 {
		return nil
	}
	out := &sdk.Usage{InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens), TotalTokens: int(u.TotalTokens)}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	if u.CachedTokens > 0 {
		out.CachedReadTokens = sdk.Ptr(int(u.CachedTokens))
	}
	if u.ReasoningTokens > 0 {
		out.ThoughtTokens = sdk.Ptr(int(u.ReasoningTokens))
	}
	return out
}

func (a *Agent) session(id sdk.SessionId) (*liveSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[string(id)]
	if !ok {
		return nil, sdk.NewInvalidParams(fmt.Sprintf("unknown session %s (session/new or session/load first)", id))
	}
	return s, nil
}

// promptText joins the prompt's blocks into one message: text as is,
// embedded files fenced with their URI, links named, images attached
// (sniffed and capped like any image Odin sends).
func promptText(blocks []sdk.ContentBlock) (string, []messages.Image, error) {
	var b strings.Builder
	var images []messages.Image
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			fmt.Fprintf(&b, "\n<file uri=%q>\n%s\n</file>\n", r.Uri, r.Text)
		case c.ResourceLink != nil:
			fmt.Fprintf(&b, " [%s](%s) ", c.ResourceLink.Name, c.ResourceLink.Uri)
		case c.Image != nil:
			name := fmt.Sprintf("image %d", len(images)+1)
			if c.Image.Uri != nil && *c.Image.Uri != "" {
				name = path.Base(*c.Image.Uri)
			}
			data, err := base64.StdEncoding.DecodeString(c.Image.Data)
			if err != nil {
				return "", nil, fmt.Errorf("image %s: its data is not base64: %v", name, err)
			}
			im, err := llm.NewImage(name, data)
			if err != nil {
				return "", nil, err
			}
			images = append(images, messages.Image{Name: im.Name, MIME: im.MIME, Data: im.Data, Width: im.Width, Height: im.Height})
		case c.Audio != nil:
			return "", nil, errors.New("audio is not supported (promptCapabilities says so)")
		case c.Resource != nil:
			return "", nil, errors.New("binary embedded resources are not supported")
		}
	}
	if strings.TrimSpace(b.String()) == "" && len(images) == 0 {
		return "", nil, errors.New("empty prompt")
	}
	return b.String(), images, nil
}

// checkCwd refuses a session's cwd that is not absolute, as ACP requires:
// Odin would take a relative one against its own working directory, a
// project the editor never named.
func checkCwd(cwd string) error {
	if !filepath.IsAbs(cwd) {
		return sdk.NewInvalidParams(fmt.Sprintf("cwd must be an absolute path (got %q)", cwd))
	}
	return nil
}

package acp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/tools/tool"
)

// OpenOptions are what the editor brings to a session beyond its cwd.
type OpenOptions struct {
	// Editor, when the client offers fs/read_text_file or
	// fs/write_text_file, is where Odin's file tools read and write: the
	// editor's buffers, unsaved edits included. Nil otherwise.
	Editor *EditorFS
	// Terminal, when the client offers terminal/*, runs the session's
	// commands in the client's terminals (still in Odin's sandbox). Nil
	// otherwise.
	Terminal *EditorTerminal
	// MCPServers are the servers the client declared in session/new or
	// session/load, as Odin's MCP configuration, by name.
	MCPServers map[string]config.MCPServer

	// calls and cards are shared by Editor, Terminal and the session.
	calls *announcer
	cards *terminalCards
}

// EditorFS reads and writes text files through the client (ACP's fs
// methods) for one session. It implements tools.Editor. The tools call it
// only for paths the session's path guard authorised.
type EditorFS struct {
	conn        *sdk.AgentSideConnection
	read, write bool
	session     atomic.Value // sdk.SessionId, set once the session exists
	// calls is the session's record of announced tool calls: a call's
	// request reaches the client after the tool_call announcing it.
	calls *announcer
}

// errNoFS makes the file tools use the disk for what the client does not
// offer (tools.ErrEditorDeclined, for writes).
var errNoFS = fmt.Errorf("acp: the client does not offer this fs method: %w", tool.ErrEditorDeclined)

func (e *EditorFS) setSession(id string) { e.session.Store(sdk.SessionId(id)) }

func (e *EditorFS) sessionID() (sdk.SessionId, error) {
	id, _ := e.session.Load().(sdk.SessionId)
	if id == "" {
		return "", errors.New("acp: fs used before the session exists")
	}
	return id, nil
}

// ReadTextFile asks the client for path's text as its buffer holds it.
func (e *EditorFS) ReadTextFile(ctx context.Context, path string) (string, error) {
	if !e.read {
		return "", errNoFS
	}
	id, err := e.sessionID()
	if err != nil {
		return "", err
	}
	if err := e.calls.waitFor(ctx); err != nil {
		return "", err
	}
	r, err := e.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: id, Path: path})
	if err != nil {
		return "", fmt.Errorf("fs/read_text_file %s: %w", path, err)
	}
	return r.Content, nil
}

// WriteTextFile has the client write content to path (its buffer and the
// file). ACP requires non-empty content, so an empty file is written to
// the disk by the caller.
func (e *EditorFS) WriteTextFile(ctx context.Context, path, content string) error {
	if !e.write || content == "" {
		return errNoFS
	}
	id, err := e.sessionID()
	if err != nil {
		return err
	}
	if err := e.calls.waitFor(ctx); err != nil {
		return err
	}
	if _, err := e.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: id, Path: path, Content: content}); err != nil {
		return fmt.Errorf("fs/write_text_file %s: %w", path, err)
	}
	return nil
}

// announcer records which tool calls the client has seen announced (their
// tool_call sent), so that a request a call makes of the client while it
// runs, such as fs/read_text_file, is written after that announcement:
// the tool runs as soon as ToolStarted is published, while the
// announcement goes out from the session's event pump. Safe for
// concurrent use.
type announcer struct {
	mu    sync.Mutex
	shown map[string]bool
	// epoch counts the resyncs (events dropped for a slow pump) and the
	// close: a waiter goes on after either, the announcement being lost.
	epoch   int
	changed chan struct{} // closed and replaced on every change
}

func newAnnouncer() *announcer {
	return &announcer{shown: map[string]bool{}, changed: make(chan struct{})}
}

// notify must be called with a.mu held.
func (a *announcer) notify() {
	close(a.changed)
	a.changed = make(chan struct{})
}

func (a *announcer) markShown(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.shown[id] = true
	a.notify()
}

// drop forgets a finished call: it makes no more requests.
func (a *announcer) drop(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.shown, id)
}

func (a *announcer) resync() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.epoch++
	a.notify()
}

func (a *announcer) close() { a.resync() }

// waitFor returns once the tool call ctx runs for has been announced to
// the client, at once for a request no call makes, or ctx's error.
func (a *announcer) waitFor(ctx context.Context) error {
	ref, ok := tool.CallOf(ctx)
	if !ok || a == nil {
		return nil
	}
	id := callID(ref.Origin, ref.ID)
	a.mu.Lock()
	epoch := a.epoch
	a.mu.Unlock()
	for {
		a.mu.Lock()
		done := a.shown[id] || a.epoch != epoch
		ch := a.changed
		a.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// mcpServers converts the client's MCP servers to Odin's configuration.
// Transports Odin's MCP client lacks (ACP's own channel) are an error
// naming the server: a session silently without a server the user
// declared would be worse.
func mcpServers(in []sdk.McpServer) (map[string]config.MCPServer, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]config.MCPServer, len(in))
	headers := func(hs []sdk.HttpHeader) map[string]string {
		m := make(map[string]string, len(hs))
		for _, h := range hs {
			m[h.Name] = h.Value
		}
		return m
	}
	for _, s := range in {
		var name string
		var c config.MCPServer
		switch {
		case s.Stdio != nil:
			name = s.Stdio.Name
			c = config.MCPServer{Type: "stdio", Command: s.Stdio.Command, Args: s.Stdio.Args}
			if len(s.Stdio.Env) > 0 {
				c.Env = make(map[string]string, len(s.Stdio.Env))
				for _, v := range s.Stdio.Env {
					c.Env[v.Name] = v.Value
				}
			}
		case s.Http != nil:
			name = s.Http.Name
			c = config.MCPServer{Type: "http", URL: s.Http.Url, Headers: headers(s.Http.Headers)}
		case s.Sse != nil:
			name = s.Sse.Name
			c = config.MCPServer{Type: "sse", URL: s.Sse.Url, Headers: headers(s.Sse.Headers)}
		default:
			return nil, errors.New("mcpServers: a server over the ACP channel is not supported; declare it as stdio, http or sse")
		}
		if name == "" {
			return nil, errors.New("mcpServers: a server has no name")
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("mcpServers: two servers are named %q", name)
		}
		out[name] = c
	}
	return out, nil
}

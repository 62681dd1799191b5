package acp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// EditorTerminal runs a session's commands in the client's terminals (ACP
// terminal/*), for a client that offers them. It implements
// tools.CommandTerminal: ExecuteCommand hands it a command already
// approved and sandboxed (Odin's own binary re-running the sandboxed
// command line), which the client runs as given.
type EditorTerminal struct {
	conn    *sdk.AgentSideConnection
	session atomic.Value // sdk.SessionId, set once the session exists
	// calls holds a terminal back until its tool call was announced;
	// cards remembers the terminal each call shows.
	calls *announcer
	cards *terminalCards
}

var _ tools.CommandTerminal = (*EditorTerminal)(nil)

func (e *EditorTerminal) setSession(id string) { e.session.Store(sdk.SessionId(id)) }

// CreateTerminal implements tools.CommandTerminal: the terminal is created
// once the client has seen its tool call announced, and shown on that
// call's card.
func (e *EditorTerminal) CreateTerminal(ctx context.Context, argv []string, dir string, outputLimit int) (tools.TerminalHandle, error) {
	sid, _ := e.session.Load().(sdk.SessionId)
	if sid == "" {
		return nil, errors.New("acp: terminal used before the session exists")
	}
	if len(argv) == 0 {
		return nil, errors.New("acp: empty command")
	}
	if err := e.calls.waitFor(ctx); err != nil {
		return nil, err
	}
	req := sdk.CreateTerminalRequest{SessionId: sid, Command: argv[0], Args: argv[1:], Cwd: &dir,
		Env: []sdk.EnvVariable{}, OutputByteLimit: &outputLimit}
	r, err := e.conn.CreateTerminal(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("terminal/create: %w", err)
	}
	h := &terminal{conn: e.conn, req: sdk.TerminalOutputRequest{SessionId: sid, TerminalId: r.TerminalId}}
	if ref, ok := tool.CallOf(ctx); ok && ctx.Err() == nil {
		id := callID(ref.Origin, ref.ID)
		e.cards.set(id, r.TerminalId)
		// The card shows the terminal live; the call's final update
		// keeps it (updates, endCalls).
		_ = e.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid,
			Update: sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(r.TerminalId)}))})
	}
	return h, nil
}

// terminal is one terminal of the client.
type terminal struct {
	conn *sdk.AgentSideConnection
	req  sdk.TerminalOutputRequest // its session and ID
}

func (t *terminal) WaitForExit(ctx context.Context) (*int, *string, error) {
	r, err := t.conn.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: t.req.SessionId, TerminalId: t.req.TerminalId})
	if err != nil {
		return nil, nil, fmt.Errorf("terminal/wait_for_exit: %w", err)
	}
	return r.ExitCode, r.Signal, nil
}

func (t *terminal) Output(ctx context.Context) (string, bool, error) {
	r, err := t.conn.TerminalOutput(ctx, t.req)
	if err != nil {
		return "", false, fmt.Errorf("terminal/output: %w", err)
	}
	return r.Output, r.Truncated, nil
}

func (t *terminal) Kill(ctx context.Context) error {
	_, err := t.conn.KillTerminal(ctx, sdk.KillTerminalRequest{SessionId: t.req.SessionId, TerminalId: t.req.TerminalId})
	return err
}

func (t *terminal) Release(ctx context.Context) error {
	_, err := t.conn.ReleaseTerminal(ctx, sdk.ReleaseTerminalRequest{SessionId: t.req.SessionId, TerminalId: t.req.TerminalId})
	return err
}

// terminalCards are the terminals tool calls show, by ACP tool call ID.
// Safe for concurrent use.
type terminalCards struct {
	mu sync.Mutex
	m  map[string]string
}

func newTerminalCards() *terminalCards { return &terminalCards{m: map[string]string{}} }

func (c *terminalCards) set(call, term string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[call] = term
}

// take returns and forgets the terminal call shows, if any: the content
// of its final update starts with it.
func (c *terminalCards) take(call string) []sdk.ToolCallContent {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[call]
	if !ok {
		return nil
	}
	delete(c.m, call)
	return []sdk.ToolCallContent{sdk.ToolTerminalRef(t)}
}

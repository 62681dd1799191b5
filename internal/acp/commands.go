package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/messages"
)

// Command is a slash command the session offers the editor
// (available_commands_update): a prompt sent as "/name args" runs it.
type Command struct {
	Name        string
	Description string
	// Hint describes the arguments; empty when the command takes none.
	Hint string
	// Expand returns the prompt the command sends for args and the mode
	// it runs in (empty: the session's). Nil for Odin's own commands,
	// which the agent runs itself (compact).
	Expand func(args string) (string, messages.Mode)
}

// compactCommand summarises the older history now, like the REPL's
// /compact; it runs between turns.
const compactCommand = "compact"

// commands are the session's commands as ACP lists them: Odin's own,
// then the session's (custom commands), a name Odin uses hiding theirs.
func (ls *liveSession) commands() []sdk.AvailableCommand {
	out := []sdk.AvailableCommand{{Name: compactCommand, Description: "summarise the older history now to free context"}}
	for _, c := range ls.cmds {
		if c.Name == compactCommand {
			continue
		}
		ac := sdk.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.Hint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.Hint}}
		}
		out = append(out, ac)
	}
	return out
}

func (ls *liveSession) commandsUpdate() sdk.SessionUpdate {
	return sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: ls.commands()}}
}

// slashCommand splits "/name args" when name is one of the session's
// commands; ok is false for any other text, which goes to the model as
// written ("/usr/bin is..." included).
func (ls *liveSession) slashCommand(body string) (c Command, args string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimLeft(body, " \t"), "/")
	if !found {
		return Command{}, "", false
	}
	name, args, _ := strings.Cut(rest, " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], rest[i+1:]
	}
	if name == compactCommand {
		return Command{Name: compactCommand}, strings.TrimSpace(args), true
	}
	for _, c := range ls.cmds {
		if c.Name == name {
			return c, strings.TrimSpace(args), true
		}
	}
	return Command{}, "", false
}

// compact runs the compact command and answers with what it did.
func (ls *liveSession) compact(ctx context.Context) sdk.PromptResponse {
	text, err := ls.s.Compact(ctx)
	if err != nil {
		text = "Could not compact: " + err.Error()
	}
	ls.send(ctx, []sdk.SessionUpdate{sdk.UpdateAgentMessageText(text)})
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}
}

// afterWrite is the connection's writer with hooks run once a response
// holding a marker has been written: the SDK writes a response only after
// its handler returns, and what follows a response must not overtake it
// (a session's first notifications, available_commands_update, follow the
// session/new response that tells the client the session's ID; the next
// turn's updates follow the previous turn's session/prompt response).
type afterWrite struct {
	w io.Writer
	// wmu keeps each message whole: the SDK and the line filter's
	// answers (wire.go) write from their own goroutines.
	wmu sync.Mutex

	mu      sync.Mutex
	pending map[string]func() // by the marker a written response holds
}

func (a *afterWrite) Write(b []byte) (int, error) {
	a.wmu.Lock()
	n, err := a.w.Write(b)
	a.wmu.Unlock()
	a.mu.Lock()
	var run []func()
	for marker, f := range a.pending {
		if bytes.Contains(b, []byte(marker)) && isResponse(b) {
			run = append(run, f)
			delete(a.pending, marker)
		}
	}
	a.mu.Unlock()
	// The SDK holds its write lock here: the hooks send on their own.
	for _, f := range run {
		go f()
	}
	return n, err
}

// isResponse reports whether the JSON-RPC message b is a response (no
// method): a notification may quote a marker in its params.
func isResponse(b []byte) bool {
	var m struct {
		Method *string `json:"method"`
	}
	return json.Unmarshal(b, &m) == nil && m.Method == nil
}

// after runs f once a response holding marker has been written.
func (a *afterWrite) after(marker string, f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending[marker] = f
}

// forget drops a hook whose response was never written.
func (a *afterWrite) forget(marker string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pending, marker)
}

// sessionMarker is what the session/new response naming session id holds.
func sessionMarker(id string) string { return `"sessionId":"` + id + `"` }

// inputMetaKey is the _meta key of a session/prompt response (or error
// data) naming the Odin input it answers: the marker the session's pump
// waits for before it sends anything of the next turn.
const inputMetaKey = "odinInputId"

func inputMarker(id string) string { return `"` + inputMetaKey + `":"` + id + `"` }

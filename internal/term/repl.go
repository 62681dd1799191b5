package term

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/term"

	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// Options configure Run.
type Options struct {
	// In and Out are the terminal (os.Stdin and os.Stdout). When either is
	// not a terminal, Run uses line mode.
	In  io.Reader
	Out io.Writer
	// Session is the session to drive; Run does not close it unless a
	// command replaces it (the caller closes the last one: see Run).
	Session Session
	// Mode is the initial mode of inputs.
	Mode messages.Mode
	// Root is the project directory: @ completes and attaches files
	// under it ("" turns mentions off).
	Root string
	// ShowRoot, when set, is the directory tool lines and the status name
	// paths relative to, in place of Root: odin attach shows a server's
	// project paths relative to it even where that project is not on
	// this machine (Root, which reads files, is then empty).
	ShowRoot string
	// DenyRead, when set, refuses @ mentions of files on the read deny
	// list.
	DenyRead DenyRead
	// HistoryPath is the persistent history file ("" keeps none).
	HistoryPath string
	// CommandDirs hold custom commands (*.md), in priority order: the
	// project's .odin/commands first, then the user's.
	CommandDirs []string
	// UntrustedCommandDirs are those of CommandDirs that belong to a project
	// the user has not trusted: their commands run in the session's mode,
	// whatever mode their front matter names (see CommandTrustItems).
	UntrustedCommandDirs []string
	// RunShell runs a custom command's !`command` line through the
	// permission policy and the sandbox (allowed are the command's
	// allowed-tools, which widen the policy for it as under Claude Code)
	// and returns what is inlined in its place: the output, or why it did
	// not run. Nil leaves such lines unexpanded, with a note.
	RunShell func(command string, allowed []string) string
	// AgentColors are the agents' declared colours by agent name (a
	// colour name or #rrggbb), used for their lines.
	AgentColors map[string]string
	// Commands are the caller's slash commands (/undo, /resume...).
	Commands []Command
	// NewSession starts a fresh session for /clear; nil makes /clear only
	// clear the screen.
	NewSession func(ctx context.Context) (Session, error)
	// Banner lines are printed first (model, project, notices).
	Banner []string
	// Initial is sent as the first input, as if typed (`odin "task"`).
	Initial string
	// LookupEnv reads NO_COLOR and TERM; nil is os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Interactive forces the terminal UI on or off; nil decides from In
	// and Out.
	Interactive *bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// MCP offers the session's MCP resources (@server:uri attachments)
	// and prompts (/mcp__server__prompt); nil offers none.
	MCP MCPCatalog
	// DetachOnInterrupt makes a second Ctrl-C while a turn runs end the
	// REPL (odin attach: the session runs on a server and goes on), where
	// the local REPL only cancels again.
	DetachOnInterrupt bool
}

// ErrNoSession is returned by Run without a session.
var ErrNoSession = errors.New("term: no session")

// IsTerminal reports whether both r and w are terminals: the condition for
// the interactive UI (and for asking approvals interactively).
func IsTerminal(r io.Reader, w io.Writer) bool {
	rf, ok1 := r.(*os.File)
	wf, ok2 := w.(*os.File)
	return ok1 && ok2 && term.IsTerminal(rf.Fd()) && term.IsTerminal(wf.Fd())
}

// Run drives the session until the user quits (/quit, Ctrl-D on an empty
// line, Ctrl-C twice on an idle prompt), stdin ends in line mode, or ctx
// ends. It returns the session in use at the end, which may differ from
// o.Session after /resume or /clear; the caller closes it. Sessions
// replaced during the run are closed by Run.
func Run(ctx context.Context, o Options) (Session, error) {
	if o.Session == nil {
		return nil, ErrNoSession
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Mode == "" {
		o.Mode = messages.ModeEdit
	}
	interactive := IsTerminal(o.In, o.Out)
	if o.Interactive != nil {
		interactive = *o.Interactive
	}
	if interactive {
		return runTTY(ctx, o)
	}
	return runLines(ctx, o)
}

// builtin is one of the REPL's own slash commands.
type builtin struct {
	usage, desc string
}

var builtinHelp = map[string]builtin{
	"help":  {"/help", "show commands and keys"},
	"mode":  {"/mode [ask|plan|edit]", "show or set the mode of new inputs (Shift-Tab cycles)"},
	"queue": {"/queue [rm N | clear]", "list queued inputs, or remove one before it starts"},
	"cost":  {"/cost", "tokens and cost of this session, by agent"},
	"clear": {"/clear", "clear the screen and start a new conversation"},
	"quit":  {"/quit", "leave (also /exit, Ctrl-D)"},
}

var builtinOrder = []string{"help", "mode", "queue", "cost", "clear", "quit"}

// helpColumn is the width of /help's first column.
const helpColumn = 24

// helpText renders /help.
func helpText(cmds []Command, custom []CustomCommand, interactive bool) string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	row := func(usage, desc string) {
		// A usage wider than the column (/rewind's, /model's) would push
		// its description out of line: the description goes under it.
		if utf8.RuneCountInString(usage) > helpColumn {
			fmt.Fprintf(&b, "  %s\n  %-*s %s\n", usage, helpColumn, "", desc)
			return
		}
		fmt.Fprintf(&b, "  %-*s %s\n", helpColumn, usage, desc)
	}
	for _, n := range builtinOrder {
		row(builtinHelp[n].usage, builtinHelp[n].desc)
	}
	for _, c := range cmds {
		u := c.Usage
		if u == "" {
			u = "/" + c.Name
		}
		row(u, c.Description)
	}
	if len(custom) > 0 {
		b.WriteString("Custom commands (.odin/commands):\n")
		for _, c := range custom {
			u := "/" + c.Name
			if c.ArgumentHint != "" {
				u += " " + c.ArgumentHint
			}
			row(u, c.Description)
		}
	}
	b.WriteString("Mentions:\n")
	row("@path", "attach a file of the project to the message (Tab completes)")
	if interactive {
		b.WriteString("Keys:\n")
		row("Enter", "send (queued while a turn runs)")
		row("Ctrl-J, Alt-Enter, \\⏎", "new line")
		row("Shift-Tab", "cycle mode ask → plan → edit")
		row("Tab", "complete a /command or an @file (↑ ↓ pick in the menu)")
		row("↑ ↓", "history")
		row("Ctrl-A/E, Alt-B/F", "start/end of line, word left/right")
		row("Ctrl-K/U/W", "delete to end, to start, word before")
		row("Ctrl-C, Esc", "cancel the running turn; Ctrl-C twice to quit")
		row("Ctrl-D", "quit on an empty line")
		row("Ctrl-L", "clear the screen")
	}
	return strings.TrimRight(b.String(), "\n")
}

// queueText renders /queue.
func queueText(q []messages.UserMessage) string {
	if len(q) == 0 {
		return "The queue is empty."
	}
	var b strings.Builder
	b.WriteString("Queued (they run in this order; /queue rm N removes one):\n")
	for i, m := range q {
		fmt.Fprintf(&b, "  %d. [%s] %s\n", i+1, m.Mode, oneLine(m.Body, 100))
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLine is s on one line, cut to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(termsafe.Text(s)), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

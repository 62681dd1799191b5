package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/term"
	"github.com/odin-code/odin/messages"
)

// runREPL is `odin` without a command: the interactive REPL on a terminal,
// line mode (one input per line, in order) otherwise.
func runREPL(_ *cobra.Command, g *globalFlags, resume sessionOptions, initial string, stdin io.Reader, stdout, stderr io.Writer) error {
	a, err := loadApp(g)
	if err != nil {
		return err
	}
	defer a.Close()
	mode, err := messages.ParseMode(a.cfg.Mode)
	if err != nil {
		return usageError("--mode: %v", err)
	}
	if err := a.checkProvider(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interactive := term.IsTerminal(stdin, stdout)
	r := &repl{a: a, interactive: interactive, mode: mode}
	resume.Mode = string(mode)
	if err := r.pick(ctx, &resume, stdin, stdout); err != nil {
		return err
	}
	first, err := r.start(ctx, resume)
	if err != nil {
		return err
	}
	opts := term.Options{
		In: stdin, Out: stdout, Session: first, Mode: mode,
		CommandDirs: commandDirs(a.root),
		Root:        a.root,
		DenyRead:    a.denyRead.Check,
		Commands:    r.commands(),
		NewSession: func(ctx context.Context) (term.Session, error) {
			return r.start(ctx, sessionOptions{Mode: string(mode)})
		},
		Banner:      r.banner(first),
		Initial:     initial,
		AgentColors: agentColors(first.live.Deps.Roster),
	}
	if len(a.cfg.MCP.Servers) > 0 {
		opts.MCP = mcpCatalog{a.mcpManager()}
	}
	if first.live.Resumed {
		opts.Banner = append(opts.Banner, a.replayTurns(ctx, first.ID(), replayedTurns)...)
	}
	if n := first.live.Recovery.Resuming(); n > 0 {
		opts.Banner = append(opts.Banner, recoveryLine(first.live.Recovery))
	}
	if !a.trust.trusted {
		opts.UntrustedCommandDirs = append(commandDirs(a.root), projectPluginDirs(a.plugins, true)...)
	}
	if a.userDir != "" {
		opts.CommandDirs = append(opts.CommandDirs, filepath.Join(a.userDir, "commands"))
	}
	opts.CommandDirs = append(opts.CommandDirs, a.foreignUserDirs("commands")...)
	opts.CommandDirs = append(opts.CommandDirs, a.pluginCommandDirs()...)
	opts.RunShell = a.commandShell(first.live.Deps)
	if a.stateDir != "" {
		opts.HistoryPath = filepath.Join(a.stateDir, "history")
	}
	// SIGHUP (the terminal or SSH connection closed) and SIGTERM end the
	// REPL like a cancel then exit: the running turn is cancelled with the
	// signal as its reason, the session is closed (which saves it), and
	// odin exits 129 or 143 as shells do. SIGINT stays the UI's Ctrl-C.
	// A SIGINT from outside (the terminal in raw mode turns Ctrl-C into a
	// key) quits the interactive REPL; line mode handles it itself.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM)
	if interactive {
		signal.Notify(sigs, os.Interrupt)
	}
	defer signal.Stop(sigs)
	var ended atomic.Value
	go func() {
		select {
		case sig := <-sigs:
			if sig != os.Interrupt {
				ended.Store(sig)
			}
			if s := r.current(); s != nil {
				s.live.Session.Cancel(sigReason(sig))
			}
			cancel()
		case <-ctx.Done():
		}
	}()
	last, err := term.Run(ctx, opts)
	if err != nil {
		err = &exitError{code: exitFailed, err: err}
	}
	if sig, ok := ended.Load().(os.Signal); ok {
		err = signalExit(sig, fmt.Errorf("%s: the session was saved", sigName(sig)))
	}
	if s, ok := last.(*replSession); ok && s != nil {
		return closeSession(s.live, err)
	}
	if last != nil {
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = last.Close(cctx)
		ccancel()
	}
	return err
}

// repl builds sessions and the commands that need the rest of Odin.
type repl struct {
	a           *app
	interactive bool
	mode        messages.Mode

	mu  sync.Mutex
	cur *replSession // the newest session started, the one in use
}

// start opens a session: interactive ones ask approvals through the bus,
// line-mode ones behave like odin run (deny, or --allow/--yolo).
func (r *repl) start(ctx context.Context, o sessionOptions) (*replSession, error) {
	o.Interactive = r.interactive
	live, err := r.a.startSession(ctx, o)
	if err != nil {
		return nil, err
	}
	s := &replSession{live: live, listening: r.a.mcpListening}
	r.mu.Lock()
	r.cur = s
	r.mu.Unlock()
	return s, nil
}

func (r *repl) current() *replSession {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

func (r *repl) banner(s *replSession) []string {
	a := r.a
	model := a.currentModel("main")
	if ref, err := a.cfg.ResolveModel(a.roleModel("main")); err == nil {
		model = ref.ID
	}
	lines := []string{fmt.Sprintf("odin · %s · model %s · session %s", a.root, model, shortID(s.ID()))}
	if r.interactive {
		lines = append(lines, "Type a task, /help for commands; Shift-Tab cycles ask/plan/edit; Ctrl-D quits.")
	}
	if n := s.live.ModelNotice; n != "" {
		lines = append(lines, "note: "+n)
	}
	if n := a.untrustedNotice(); n != "" {
		lines = append(lines, "note: "+n)
	}
	return lines
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// commands are the slash commands backed by the app: the store, the
// roster and checkpoints.
func (r *repl) commands() []term.Command {
	a := r.a
	return []term.Command{
		r.modelCommand(),
		{Name: "agents", Description: "the session's agent runs (running and finished: status, elapsed, tokens, last activities) and the specialists", Run: func(ctx context.Context, args string) (term.Result, error) {
			if err := noArgs("agents", args); err != nil {
				return term.Result{}, err
			}
			runs, err := r.current().live.Session.AgentRuns(ctx)
			if err != nil {
				return term.Result{}, err
			}
			text := "No agent runs in this session yet."
			if len(runs) > 0 {
				text = "Agent runs:\n" + agentRunsTable(runs, time.Now())
			}
			return term.Result{Listing: text + "\n\nSpecialists:\n" + r.agents()}, nil
		}},
		{Name: "undo", Usage: "/undo [--force]", Description: "restore the files of the last change set", Idle: true,
			Run: func(ctx context.Context, args string) (term.Result, error) {
				force := strings.TrimSpace(args) == "--force"
				if !force && strings.TrimSpace(args) != "" {
					return term.Result{}, fmt.Errorf("usage: /undo [--force]")
				}
				msg, err := a.undo(ctx, force)
				return term.Result{Text: msg}, err
			}},
		r.rewindCommand(),
		{Name: "compact", Description: "summarise the older history now to free context", Idle: true,
			Run: func(ctx context.Context, args string) (term.Result, error) {
				if err := noArgs("compact", args); err != nil {
					return term.Result{}, err
				}
				return r.compact(ctx)
			}},
		{Name: "init", Description: "analyse the project and write (or revise) ODIN.md", Idle: true,
			Run: func(ctx context.Context, args string) (term.Result, error) {
				if err := noArgs("init", args); err != nil {
					return term.Result{}, err
				}
				res, err := a.runInit(ctx, r.current().live, nil)
				if err != nil {
					return term.Result{}, err
				}
				var b strings.Builder
				printInit(&b, res)
				return term.Result{Text: "```\n" + strings.TrimRight(b.String(), "\n") + "\n```"}, nil
			}},
		{Name: "sessions", Description: "list this project's sessions", Run: func(ctx context.Context, args string) (term.Result, error) {
			// Words after it would read as a filter it does not apply.
			if err := noArgs("sessions", args); err != nil {
				return term.Result{}, err
			}
			text, err := r.sessions(ctx)
			return term.Result{Listing: text}, err
		}},
		{Name: "resume", Usage: "/resume [ID]", Description: "continue a stored session (the latest other one without ID)", Idle: true,
			Run: func(ctx context.Context, args string) (term.Result, error) {
				return r.resume(ctx, strings.TrimSpace(args))
			}},
	}
}

// noArgs refuses words after a command that takes none: /compact
// "keep the API notes" would otherwise run as plain /compact, the words
// silently dropped, before the user could take them back.
func noArgs(name, args string) error {
	if strings.TrimSpace(args) != "" {
		return fmt.Errorf("/%s takes no arguments (got %q); type /%s alone", name, strings.TrimSpace(args), name)
	}
	return nil
}

func (r *repl) agents() string {
	var b strings.Builder
	deps := r.current().live.Deps
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMODEL\tTIMEOUT\tREAD-ONLY\tDESCRIPTION")
	for _, def := range deps.Roster.Agents() {
		ro := "no"
		if actors.ReadOnlyAgent(deps.Tools, def) {
			ro = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", def.Name, def.Model, def.Timeout, ro, firstLine(def.Description))
	}
	_ = tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}

func (r *repl) sessions(ctx context.Context) (string, error) {
	st, err := r.a.openStore(ctx)
	if err != nil {
		return "", err
	}
	list, err := st.Sessions(ctx, store.SessionQuery{Project: r.a.root, Limit: 15})
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "No sessions yet.", nil
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tMESSAGES\tCOST\tTITLE")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", shortID(s.ID), s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.MessageCount, present.Cost(s.Cost, !r.a.modelPriced(s.Model)), oneLineTitle(s.Title))
	}
	_ = tw.Flush()
	return strings.TrimRight(b.String(), "\n") + "\n/resume ID continues one (the ID or any unique prefix).", nil
}

func oneLineTitle(s string) string {
	s = firstLine(s)
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

func (r *repl) compact(ctx context.Context) (term.Result, error) {
	res, err := r.current().live.Session.Compact(ctx)
	switch {
	case err != nil:
		return term.Result{}, err
	case res.Err != "":
		return term.Result{}, fmt.Errorf("%s", res.Err)
	case res.Skipped != "":
		return term.Result{Text: "Nothing to compact: " + res.Skipped}, nil
	}
	c := res.Compacted
	return term.Result{Text: fmt.Sprintf("Compacted %d messages into a summary: %s → %s tokens.", c.Messages, present.Tokens(c.TokensBefore), present.Tokens(c.TokensAfter))}, nil
}

// resume starts the session id (or the latest one that is not current).
func (r *repl) resume(ctx context.Context, id string) (term.Result, error) {
	if id == "" {
		st, err := r.a.openStore(ctx)
		if err != nil {
			return term.Result{}, err
		}
		list, err := st.Sessions(ctx, store.SessionQuery{Project: r.a.root, Limit: 5})
		if err != nil {
			return term.Result{}, err
		}
		for _, s := range list {
			if s.MessageCount > 0 && s.ID != r.current().ID() {
				id = s.ID
				break
			}
		}
		if id == "" {
			return term.Result{}, fmt.Errorf("no other session to resume in %s", r.a.root)
		}
	}
	s, err := r.start(ctx, sessionOptions{Resume: id, Mode: string(r.mode)})
	if err != nil {
		return term.Result{}, err
	}
	text := fmt.Sprintf("Resumed session %s.", s.ID())
	if s.live.ModelNotice != "" {
		text += "\n\nNote: " + s.live.ModelNotice + "."
	}
	// The last turns, as `odin -c` shows them: the conversation the next
	// message continues.
	recap := r.a.replayTurns(ctx, s.ID(), replayedTurns)
	if n := s.live.Recovery.Resuming(); n > 0 {
		recap = append(recap, recoveryLine(s.live.Recovery))
	}
	return term.Result{Session: s, Text: text, Listing: strings.Join(recap, "\n")}, nil
}

// agentColors are the colours the roster's agents declare, for the REPL.
func agentColors(r *actors.Roster) map[string]string {
	out := map[string]string{}
	for _, def := range r.Agents() {
		if def.Color != "" {
			out[def.Name] = def.Color
		}
	}
	return out
}

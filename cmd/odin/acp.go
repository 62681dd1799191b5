package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/acp"
	"github.com/odin-code/odin/internal/logging"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/term"
	"github.com/odin-code/odin/messages"
)

func newACPCmd(g *globalFlags, stdin io.Reader, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "acp",
		Short: "Speak the Agent Client Protocol on stdin/stdout, for editors (Zed, Neovim, JetBrains, Emacs)",
		Long: `Run Odin as an Agent Client Protocol agent (https://agentclientprotocol.com):
the editor starts "odin acp" and talks JSON-RPC over its stdin and stdout.
Each ACP session is an Odin session of the project at the session's cwd,
stored like any other (odin sessions and session/list list them;
session/load and session/resume reopen one). Approvals are asked through
the editor on the tool call's card; modes ask, plan and edit are ACP
session modes, stored with the session; the custom commands are its slash
commands and the configured models its model choices. A prompt sent while
a turn runs waits its turn; only session/cancel cancels. When the editor
offers terminals, commands run in them, still in Odin's sandbox (see
docs/acp.md). Logs go to the log file, never to stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			gcFor(longLived)
			mode := messages.ModeEdit
			if g.mode != "" {
				m, err := messages.ParseMode(g.mode)
				if err != nil {
					return usageError("--mode: %v", err)
				}
				mode = m
			}
			// The first project's log is the connection's log.
			a, err := loadApp(g)
			if err != nil {
				return err
			}
			defer a.Close()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opener := newSessionOpener(g)
			defer opener.Close() // acp.Serve has closed every session
			return acp.Serve(ctx, acp.Options{
				Opener:  acpOpener{opener},
				Mode:    mode,
				Version: versionString(),
				Log:     logging.Slog(a.log.With().Str("component", "acp").Logger()),
			}, stdin, stdout)
		},
	}
}

// acpOpener adapts sessionOpener to acp.Opener.
type acpOpener struct {
	o sessionOpener
}

func (a acpOpener) New(ctx context.Context, cwd string, o acp.OpenOptions) (acp.Session, error) {
	return a.o.open(ctx, cwd, "", frontOf(o))
}

func (a acpOpener) Load(ctx context.Context, id, cwd string, o acp.OpenOptions) (acp.Session, acp.Loaded, error) {
	s, err := a.o.open(ctx, cwd, id, frontOf(o))
	if err != nil {
		return nil, acp.Loaded{}, err
	}
	// The session's stored model was restored as it opened (startSession,
	// restoreModel), unless odin acp runs with --model or the
	// configuration no longer offers it; the log says which and why.
	var l acp.Loaded
	if l.History, err = s.history(ctx); err == nil {
		l.Mode, l.Cost, err = s.stored(ctx)
	}
	if err != nil {
		_ = s.Close(ctx)
		return nil, acp.Loaded{}, err
	}
	return s, l, nil
}

func (a acpOpener) List(ctx context.Context, cwd string) ([]acp.StoredSession, error) {
	g := *a.o.g
	if cwd != "" {
		g.dir = cwd
	}
	app, err := loadApp(&g)
	if err != nil {
		return nil, err
	}
	defer app.Close()
	app.stores = a.o.stores
	st, err := app.openStore(ctx)
	if err != nil {
		return nil, err
	}
	q := store.SessionQuery{}
	if cwd != "" {
		q.Project = app.root
	}
	list, err := st.Sessions(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]acp.StoredSession, 0, len(list))
	for _, s := range list {
		out = append(out, acp.StoredSession{ID: s.ID, Cwd: s.Project, Title: s.Title, UpdatedAt: s.UpdatedAt})
	}
	return out, nil
}

// SetMode records m as the session's mode (acp.Session).
func (s *frontSession) SetMode(ctx context.Context, m messages.Mode) error {
	st, err := s.a.openStore(ctx)
	if err != nil {
		return err
	}
	mode := string(m)
	return st.UpdateSession(ctx, s.live.ID, store.SessionUpdate{Mode: &mode})
}

// Commands are the custom commands the REPL offers, from the same
// directories with the same trust: an untrusted project's commands run in
// the session's mode, whatever their front matter says (acp.Session).
func (s *frontSession) Commands() []acp.Command {
	a := s.a
	dirs := commandDirs(a.root)
	if a.userDir != "" {
		dirs = append(dirs, filepath.Join(a.userDir, "commands"))
	}
	dirs = append(dirs, a.foreignUserDirs("commands")...)
	dirs = append(dirs, a.pluginCommandDirs()...)
	cmds, errs := term.LoadCustomCommands(dirs...)
	for _, err := range errs {
		a.log.Warn().Err(err).Msg("acp: custom command not offered")
	}
	var untrusted []string
	if !a.trust.trusted {
		untrusted = append(commandDirs(a.root), projectPluginDirs(a.plugins, true)...)
		cmds = term.IgnoreUntrustedModes(cmds, untrusted)
	}
	cmds = term.WithShell(cmds, untrusted, a.commandShell(s.live.Deps))
	out := make([]acp.Command, 0, len(cmds))
	for _, c := range cmds {
		out = append(out, acp.Command{Name: c.Name, Description: c.Description, Hint: c.ArgumentHint,
			Expand: func(args string) (string, messages.Mode) { return c.Expand(args), c.Mode }})
	}
	return out
}

// Compact summarises the older history now (acp.Session), as /compact in
// the REPL.
func (s *frontSession) Compact(ctx context.Context) (string, error) {
	res, err := s.live.Session.Compact(ctx)
	switch {
	case err != nil:
		return "", err
	case res.Err != "":
		return "", errors.New(res.Err)
	case res.Skipped != "":
		return "Nothing to compact: " + res.Skipped, nil
	}
	c := res.Compacted
	return fmt.Sprintf("Compacted %d messages into a summary: %s → %s tokens.", c.Messages, present.Tokens(c.TokensBefore), present.Tokens(c.TokensAfter)), nil
}

// Models are the main model now and the configured models the session may
// switch to: the main and small ones and those of model_info that resolve
// (acp.Session).
func (s *frontSession) Models() (string, []string) {
	cfg := s.a.cfg
	cur := s.a.currentModel("main")
	candidates := append([]string{cur, cfg.Models.Main, cfg.Models.Small}, slices.Sorted(maps.Keys(cfg.ModelInfo))...)
	var out []string
	for _, id := range candidates {
		if id == "" || slices.Contains(out, id) {
			continue
		}
		if _, err := cfg.ResolveModel(id); err == nil {
			out = append(out, id)
		}
	}
	return cur, out
}

// SetModel switches the main model from the next turn on, as /model does
// in the REPL, and records it with the session so that a load in another
// process starts in it (acp.Session). It is stored first, through the
// session's journal: a model the next process would not see is not set.
func (s *frontSession) SetModel(ctx context.Context, id string) error {
	_, err := s.a.setSessionModel(ctx, s.live, id)
	return err
}

// Title is the session's stored title (acp.Session).
func (s *frontSession) Title(ctx context.Context) (string, error) {
	st, err := s.a.openStore(ctx)
	if err != nil {
		return "", err
	}
	rec, err := st.Session(ctx, s.live.ID)
	if err != nil {
		return "", err
	}
	return rec.Title, nil
}

// ContextWindow is the main model's context window (acp.Session).
func (s *frontSession) ContextWindow() int {
	m, err := s.a.model("main")
	if err != nil {
		return 0
	}
	return m.ContextWindow
}

// stored is the session's recorded mode (empty when none valid is) and
// what it has spent.
func (s *frontSession) stored(ctx context.Context) (messages.Mode, float64, error) {
	st, err := s.a.openStore(ctx)
	if err != nil {
		return "", 0, err
	}
	rec, err := st.Session(ctx, s.live.ID)
	if err != nil {
		return "", 0, err
	}
	m, err := messages.ParseMode(rec.Mode)
	if err != nil {
		return "", rec.Cost, nil
	}
	return m, rec.Cost, nil
}

// frontOf is what the editor brings, as the session opener takes it. A nil
// *EditorFS (*EditorTerminal) must not become a non-nil tools.Editor
// (tools.CommandTerminal).
func frontOf(o acp.OpenOptions) frontOptions {
	fo := frontOptions{MCPServers: o.MCPServers,
		// ACP's session/request_permission offers options, not fields:
		// a server's form cannot be shown faithfully in the editor.
		NoElicit: "the editor (ACP) has no way to show an MCP server's form; use the terminal REPL or odin serve for servers that ask for input"}
	if o.Editor != nil {
		fo.Editor = o.Editor
	}
	if o.Terminal != nil {
		fo.Terminal = o.Terminal
	}
	return fo
}

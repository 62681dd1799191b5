package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/acp"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/logging"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

func newACPCmd(g *globalFlags, stdin io.Reader, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "acp",
		Short: "Speak the Agent Client Protocol on stdin/stdout, for editors (Zed, Neovim, JetBrains, Emacs)",
		Long: `Run Odin as an Agent Client Protocol agent (https://agentclientprotocol.com):
the editor starts "odin acp" and talks JSON-RPC over its stdin and stdout.
Each ACP session is an Odin session of the project at the session's cwd,
stored like any other (odin sessions lists them; session/load resumes one).
Approvals are asked through the editor; modes ask, plan and edit are ACP
session modes. Logs go to the log file, never to stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
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
			return acp.Serve(ctx, acp.Options{
				Opener:  &acpOpener{g: g},
				Mode:    mode,
				Version: versionString(),
				Log:     logging.Slog(a.log.With().Str("component", "acp").Logger()),
			}, stdin, stdout)
		},
	}
}

// acpOpener starts sessions the way the REPL does (startSession with an
// interactive approver), one app per session so that each session's cwd is
// its project with that project's configuration, trust and policy.
type acpOpener struct {
	g *globalFlags
}

func (o *acpOpener) app(cwd string) (*app, error) {
	g := *o.g
	if cwd != "" {
		g.dir = cwd
	}
	a, err := loadApp(&g)
	if err != nil {
		return nil, err
	}
	if err := a.checkProvider(); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (o *acpOpener) New(ctx context.Context, cwd string) (acp.Session, error) {
	a, err := o.app(cwd)
	if err != nil {
		return nil, err
	}
	live, err := a.startSession(ctx, sessionOptions{Interactive: true, Mode: a.cfg.Mode})
	if err != nil {
		a.Close()
		return nil, err
	}
	return &acpSession{a: a, live: live}, nil
}

func (o *acpOpener) Load(ctx context.Context, id, cwd string) (acp.Session, []llm.Message, error) {
	a, err := o.app(cwd)
	if err != nil {
		return nil, nil, err
	}
	live, err := a.startSession(ctx, sessionOptions{Interactive: true, Resume: id})
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	var history []store.Message
	if st, err := a.openStore(ctx); err == nil {
		history, err = st.Messages(ctx, live.ID)
		if err != nil {
			_ = live.Close(ctx)
			a.Close()
			return nil, nil, err
		}
	}
	return &acpSession{a: a, live: live}, store.LLMMessages(history), nil
}

// acpSession adapts a liveSession to acp.Session.
type acpSession struct {
	a    *app
	live *liveSession
}

func (s *acpSession) ID() string { return s.live.ID }
func (s *acpSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	return s.live.Session.Submit(body, mode)
}
func (s *acpSession) Cancel(reason string) { s.live.Session.Cancel(reason) }
func (s *acpSession) Bus() *events.Bus     { return s.live.Bus }
func (s *acpSession) Answer(id string, d policy.Decision) error {
	return s.live.Approver.Answer(id, d)
}
func (s *acpSession) Close(ctx context.Context) error {
	err := s.live.Close(ctx)
	s.a.Close()
	return err
}

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/internal/term"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

type attachFlags struct {
	server string
	token  string
	tlsCA  string
	turns  int
}

// attachTokenEnv holds the bearer token for odin attach when --token is
// not given (a flag's value shows in ps; the environment does not).
const attachTokenEnv = "ODIN_SERVE_TOKEN"

func newAttachCmd(g *globalFlags, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	f := &attachFlags{}
	cmd := &cobra.Command{
		Use:   "attach ID",
		Short: "Attach the REPL to a session hosted by odin serve (local or remote)",
		Long: `Attach the REPL to a session that odin serve hosts: its last turns, then its
live events; what you type is sent to it, /queue shows and edits its queue,
approvals it asks for are shown and answered here (or by any other client
of the session: the web viewer, an editor over ACP, another attach).

Ctrl-C cancels the running turn; a second Ctrl-C, /detach, /quit or Ctrl-D
on an empty line detaches: the session goes on running on the server.

ID may be a unique prefix. Without --server, attach finds the odin serve
running on this machine (it records its address in <state dir>/serve/addr)
and reads its token file. A remote server needs https (plain http is
refused beyond loopback, as odin serve refuses to listen there without
TLS) and its token: --token, or $` + attachTokenEnv + `.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAttach(g, f, args[0], stdin, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.server, "server", "", "odin serve's URL (default: the local odin serve's recorded address)")
	fl.StringVar(&f.token, "token", "", "bearer token (default: $"+attachTokenEnv+", or the local server's token file)")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "PEM file of the CA (or self-signed certificate) to trust for the server, beside the system's")
	fl.IntVar(&f.turns, "history", replayedTurns, "how many of the session's last turns to show first")
	return cmd
}

// serveAddrFile is where odin serve records the URL it listens on, for
// odin attach on the same machine.
func serveAddrFile(stateDir string) string { return filepath.Join(stateDir, "serve", "addr") }

// attachTarget is the server odin attach talks to.
type attachTarget struct {
	base  string
	token string
	hc    *http.Client
}

// attachServer works out the server's URL, token and HTTP client from the
// flags, the environment and the local server's state files.
func attachServer(f *attachFlags, stateDir string, getenv func(string) string) (attachTarget, error) {
	raw := strings.TrimSpace(f.server)
	local := false
	if raw == "" {
		if stateDir == "" {
			return attachTarget{}, usageError("no state directory to find a local odin serve (set XDG_STATE_HOME or HOME), and no --server URL")
		}
		b, err := os.ReadFile(serveAddrFile(stateDir))
		if errors.Is(err, os.ErrNotExist) {
			return attachTarget{}, usageError("no local odin serve is running (%s does not exist): start odin serve, or give --server URL", serveAddrFile(stateDir))
		}
		if err != nil {
			return attachTarget{}, usageError("reading the local odin serve's address: %v; give --server URL", err)
		}
		raw, local = strings.TrimSpace(string(b)), true
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return attachTarget{}, usageError("--server %q: want http(s)://host:port", raw)
	}
	loopback := isLoopback(u.Hostname())
	if u.Scheme == "http" && !loopback {
		return attachTarget{}, usageError("--server %s: plain http beyond loopback would send the token and the session in clear; use https (odin serve --tls-cert/--tls-key, or a TLS proxy)", raw)
	}
	if u.User != nil {
		return attachTarget{}, usageError("--server %s: no credentials in the URL; give the token with --token or $%s", u.Redacted(), attachTokenEnv)
	}
	t := attachTarget{base: strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/")}
	t.token = strings.TrimSpace(f.token)
	if t.token == "" {
		t.token = strings.TrimSpace(getenv(attachTokenEnv))
	}
	if t.token == "" && (local || loopback) && stateDir != "" {
		// The local server's own token file: same user, same machine.
		if b, err := os.ReadFile(filepath.Join(stateDir, "serve", "token")); err == nil {
			t.token = strings.TrimSpace(string(b))
		}
	}
	if t.token == "" {
		return attachTarget{}, usageError("no token for %s: give --token, or set $%s (the server's token is in its <state dir>/serve/token)", t.base, attachTokenEnv)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if f.tlsCA != "" {
		pem, err := os.ReadFile(f.tlsCA)
		if err != nil {
			return attachTarget{}, usageError("--tls-ca: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return attachTarget{}, usageError("--tls-ca %s: no PEM certificate in it", f.tlsCA)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	t.hc = &http.Client{Transport: tr}
	return t, nil
}

// recordServeAddr writes the URL odin serve listens on for odin attach;
// the returned function removes it at exit unless another server has
// written its own since.
func recordServeAddr(stateDir, scheme string, addr net.Addr) func() {
	if stateDir == "" {
		return func() {}
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return func() {}
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // listening on every address: loopback reaches it
	}
	u := scheme + "://" + net.JoinHostPort(host, port)
	path := serveAddrFile(stateDir)
	if err := fsutil.WriteFileAtomic(path, []byte(u+"\n"), 0o600); err != nil {
		return func() {}
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == u {
			_ = os.Remove(path)
		}
	}
}

func runAttach(g *globalFlags, f *attachFlags, id string, stdin io.Reader, stdout, stderr io.Writer) error {
	mode := messages.ModeEdit
	if g.mode != "" {
		m, err := messages.ParseMode(g.mode)
		if err != nil {
			return usageError("--mode: %v", err)
		}
		mode = m
	}
	stateDir := config.StateDir(nil)
	target, err := attachServer(f, stateDir, os.Getenv)
	if err != nil {
		return err
	}
	// Line mode would answer every approval "deny" for a session others
	// may be answering; scripts have the API itself.
	if !term.IsTerminal(stdin, stdout) {
		return usageError("odin attach needs a terminal (stdin and stdout); scripts can drive the session through odin serve's HTTP API (/openapi.yaml)")
	}
	c := &attachClient{base: target.base, token: target.token, hc: target.hc}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	id, err = c.resolve(ctx, id)
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("attach: %w", err)}
	}
	// The stream starts after the server's last event now; the turn running
	// and the inputs queued at this moment are shown from the queue, the
	// turns before from the stored transcript.
	info, err := c.session(ctx, id)
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("attach: %w", err)}
	}
	qs, err := c.queue(ctx, id)
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("attach: %w", err)}
	}
	var initial []messages.Event
	if qs.Running != nil {
		initial = append(initial, messages.TurnStarted{Input: *qs.Running})
	}
	for i, q := range qs.Queued {
		initial = append(initial, messages.InputQueued{Input: q, Position: i + 1})
	}
	banner := []string{fmt.Sprintf("odin attach · %s · project %s · session %s", termsafe.Line(target.base), termsafe.Line(info.Project), shortID(id))}
	banner = append(banner, "Type a task, /help for commands; Ctrl-C cancels the turn, twice detaches; /detach or Ctrl-D leaves the session running.")
	if info.TakenOver != "" {
		banner = append(banner, "note: "+termsafe.Line(info.TakenOver))
	}
	stored, _, err := c.transcript(ctx, id)
	if err != nil {
		banner = append(banner, "note: the session's history could not be read: "+termsafe.Line(err.Error()))
	}
	banner = append(banner, historyTail(id, stored, f.turns, qs.Running)...)

	sess := newRemoteSession(c, id, info.LastEvent, initial)
	sess.storedTurns = len(stored)
	opts := term.Options{
		In: stdin, Out: stdout, Session: sess, Mode: mode, Banner: banner,
		DetachOnInterrupt: true,
		Commands: []term.Command{
			{Name: "detach", Description: "leave; the session goes on running on the server", Run: func(context.Context, string) (term.Result, error) {
				return term.Result{Quit: true}, nil
			}},
			{Name: "cancel", Description: "cancel the running turn (queued inputs stay queued)", Run: func(context.Context, string) (term.Result, error) {
				sess.Cancel("cancelled by the user (/cancel)")
				return term.Result{Text: "Cancelling the running turn."}, nil
			}},
		},
	}
	// Tool lines and the status name the server's project files relative
	// to its project, as odin run shows them, wherever that project is.
	if filepath.IsAbs(info.Project) {
		opts.ShowRoot = info.Project
	}
	// @ mentions read files here: only when the project is on this machine.
	if fi, err := os.Stat(info.Project); err == nil && fi.IsDir() && isLoopback(hostOf(target.base)) {
		opts.Root = info.Project
	}
	if stateDir != "" {
		opts.HistoryPath = filepath.Join(stateDir, "history")
	}
	// A closed terminal (SIGHUP), SIGTERM or a SIGINT from outside detach:
	// the session is the server's, not this process's.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, runErr := term.Run(ctx, opts)
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	closeErr := sess.Close(dctx)
	dcancel()
	fmt.Fprintf(stderr, "odin attach: detached from session %s; it goes on running on the server (odin attach %s comes back)\n", shortID(id), shortID(id))
	if runErr != nil {
		return &exitError{code: exitFailed, err: runErr}
	}
	if closeErr != nil {
		return &exitError{code: exitFailed, err: closeErr}
	}
	return nil
}

func hostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// storedTurn is one turn of a stored transcript: the user's input and
// the turn's last reply.
type storedTurn struct{ user, answer string }

// transcript reads the session's stored messages; ok is false when the
// server keeps no history (501).
func (c *attachClient) transcript(ctx context.Context, id string) (turns []storedTurn, ok bool, err error) {
	var tr serve.Transcript
	if _, err := c.call(ctx, http.MethodGet, "/v1/history/"+url.PathEscape(id)+"/transcript", nil, nil, &tr); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Code == http.StatusNotImplemented {
			return nil, false, nil
		}
		return nil, false, err
	}
	for _, e := range tr.Entries {
		var text strings.Builder
		for _, p := range e.Parts {
			if p.Type == "text" {
				text.WriteString(p.Text)
			}
		}
		body := strings.TrimSpace(text.String())
		if body == "" {
			continue
		}
		switch e.Role {
		case "user":
			// Odin's own notes to the model (the gates' outcome) are not
			// turns the user started.
			if strings.HasPrefix(body, "[Odin] ") {
				continue
			}
			turns = append(turns, storedTurn{user: body})
		case "assistant":
			if len(turns) > 0 {
				turns[len(turns)-1].answer = body // the turn's last reply is its answer
			}
		}
	}
	return turns, true, nil
}

// historyTail renders the last turns of the stored transcript as the
// REPL's banner shows a resumed session's: the user's input and the
// answer, clipped. The running turn (shown live) is left out.
func historyTail(id string, list []storedTurn, turns int, running *messages.UserMessage) []string {
	if running != nil && len(list) > 0 && list[len(list)-1].user == strings.TrimSpace(running.Body) {
		list = list[:len(list)-1]
	}
	if turns <= 0 || len(list) == 0 {
		return nil
	}
	skipped := max(0, len(list)-turns)
	out := []string{fmt.Sprintf("── session %s: the last %d of %d turn(s) ──", shortID(id), len(list)-skipped, len(list))}
	for _, t := range list[skipped:] {
		out = append(out, "❯ "+termsafe.Text(clip(t.user, 3)))
		if t.answer != "" {
			out = append(out, "odin: "+termsafe.Text(clip(t.answer, 8)))
		}
	}
	return append(out, "──")
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

type runFlags struct {
	output string
	quiet  bool
	cont   bool
	resume string
	images []string
}

func newRunCmd(g *globalFlags, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:     "run [flags] \"task\" | -",
		Aliases: []string{"exec"},
		Short:   "Run one task headless and print the result (also odin -p \"task\")",
		Long: `Run one task without the REPL. The task is the argument; piped stdin is then
context appended to it (cat log | odin run "why does this fail?"). With no
argument, or "-", stdin is the task (echo "fix the tests" | odin run).

With -q only the answer goes to stdout, so $(odin run -q "...") captures it.
--output stream-json is documented in docs/stream-json.md.

Exit codes: 0 done, 1 failed, 2 usage or configuration error, 3 a mandatory
quality gate failed after the fix rounds, 4 the session is in use by another
odin process, 5 the answer was given but could not be saved to the session
store (disk full, read-only database), 6 a budget was spent (--max-budget-usd,
budget.turn, budget.session), 130 cancelled (Ctrl-C), 129 and 143
ended by SIGHUP (terminal closed) and SIGTERM: the turn is cancelled and saved
first, as with Ctrl-C.

Headless runs never wait for an answer: anything that would need approval is
denied, unless widened with --allow, --add-dir or --yolo.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			task, err := readTask(args, stdin)
			if err != nil {
				return err
			}
			switch f.output {
			case "text", "json", "stream-json":
			default:
				return usageError("--output must be text, json or stream-json (got %q)", f.output)
			}
			if g.maxUSD < 0 {
				return usageError("--max-budget-usd must not be negative (got %v)", g.maxUSD)
			}
			return runTask(g, f, task, stdout, stderr)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text, json (one object at the end) or stream-json (one event per line)")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "text output: print only the answer (stdout); no progress, diff, gates or usage")
	cmd.Flags().BoolVarP(&f.cont, "continue", "c", false, "continue the project's most recent session")
	cmd.Flags().StringVar(&f.resume, "resume", "", "continue the session with this ID or unique prefix (odin sessions lists them)")
	cmd.Flags().Float64Var(&g.maxUSD, "max-budget-usd", 0, "stop when the session has spent this many US dollars (budget.session.usd); exit code 6")
	cmd.Flags().StringArrayVar(&f.images, "image", nil, "attach an image file (PNG, JPEG, GIF or WebP, at most 5 MB) to the task; repeatable")
	return cmd
}

func readTask(args []string, stdin io.Reader) (string, error) { return taskInput(args, stdin) }

func runTask(g *globalFlags, f *runFlags, task string, stdout, stderr io.Writer) error {
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
	if f.cont && f.resume != "" {
		return usageError("use either --continue or --resume, not both")
	}
	images, err := a.readImages(f.images)
	if err != nil {
		return err
	}
	ctx, stopEvents := context.WithCancel(context.Background())
	defer stopEvents()
	live, err := a.startSession(ctx, sessionOptions{Continue: f.cont, Resume: f.resume, Mode: string(mode)})
	if err != nil {
		return err
	}
	sess, sessionID := live.Session, live.ID
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = live.Close(cctx)
	}()
	if n := a.untrustedNotice(); n != "" && !f.quiet {
		fmt.Fprintln(stderr, "note:", n)
	}
	evs := live.Bus.Subscribe(ctx, 256, true)
	a.mcpListening(live.Bus)

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals()...)
	defer signal.Stop(sigs)

	r := newRenderer(f.output, f.quiet, a.root, stdout, stderr)
	if f.output == "stream-json" {
		writeJSON(stdout, a.initEvent(live, mode))
	}
	sess.SubmitImages(task, mode, images)
	var interrupts int
	var ended os.Signal // SIGHUP or SIGTERM: exit with its code once the turn is saved
	for {
		select {
		case sig := <-sigs:
			interrupts++
			if sig != os.Interrupt {
				ended = sig
			}
			if interrupts > 1 {
				return signalExit(ended, fmt.Errorf("interrupted"))
			}
			if ended != nil {
				r.notice(fmt.Sprintf("%s: cancelling the turn and saving the session…", sigName(sig)))
				sess.Cancel(sigReason(sig))
				continue
			}
			r.notice("cancelling… (press Ctrl-C again to quit at once)")
			sess.Cancel("interrupted (Ctrl-C)")
		case env, ok := <-evs:
			if !ok {
				return &exitError{code: exitFailed, err: fmt.Errorf("event stream closed")}
			}
			r.event(env)
			if tf, ok := env.Event.(messages.TurnFinished); ok {
				r.final(tf.Result, sessionID)
				if ended != nil {
					return closeSession(live, signalExit(ended, fmt.Errorf("%s", tf.Result.Error)))
				}
				return closeSession(live, statusError(tf.Result))
			}
		}
	}
}

// stopSignals end a run or the REPL: SIGINT cancels the turn (a second one
// quits); SIGHUP (the terminal or SSH connection closed) and SIGTERM cancel
// the turn, let it be saved, and exit.
func stopSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGHUP, syscall.SIGTERM} }

// signalExit is the exit of a run ended by sig, with the shells' code
// 128+n: 130 for SIGINT (also when sig is nil), 129 SIGHUP, 143 SIGTERM.
func signalExit(sig os.Signal, err error) error {
	if s, ok := sig.(syscall.Signal); ok {
		return &exitError{code: 128 + int(s), err: err}
	}
	return &exitError{code: exitCancelled, err: err}
}

func sigName(sig os.Signal) string {
	switch sig {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return "SIGINT"
}

// sigReason is the cancelled turn's reason, kept in its result.
func sigReason(sig os.Signal) string {
	switch sig {
	case syscall.SIGHUP:
		return "hangup (SIGHUP): the terminal closed"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	}
	return "interrupted (Ctrl-C)"
}

// statusError maps a turn's status to the exit code.
func statusError(res messages.TurnResult) error {
	switch res.Status {
	case messages.TurnDone:
		return nil
	case messages.TurnCancelled:
		return &exitError{code: exitCancelled, err: fmt.Errorf("%s", res.Error)}
	case messages.TurnGateFailed:
		return &exitError{code: exitGate, err: fmt.Errorf("%s", res.Error)}
	case messages.TurnBudgetExceeded:
		return &exitError{code: exitBudget, err: fmt.Errorf("%s", res.Error)}
	}
	return &exitError{code: exitFailed, err: fmt.Errorf("%s", res.Error)}
}

// jsonResult is the --output json document: the turn's result with the
// fields Claude Code's result carries, under its names, so tooling
// written for claude -p --output-format json reads it (docs/stream-json.md).
type jsonResult struct {
	Type      string `json:"type"`    // "result"
	Subtype   string `json:"subtype"` // "success" or "error_<status>"
	IsError   bool   `json:"is_error"`
	Result    string `json:"result"` // the answer
	SessionID string `json:"session_id"`
	NumTurns  int    `json:"num_turns"`
	// DurationMS is elapsed_ns in milliseconds, Claude's unit.
	DurationMS int64 `json:"duration_ms"`
	// TotalCostUSD is null when a model's price is unknown.
	TotalCostUSD *float64 `json:"total_cost_usd"`
	messages.TurnResult
}

func writeJSON(w io.Writer, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		// C1 and bidi controls escaped too: the same data, safe to print.
		_, _ = w.Write(termsafe.JSON(b.Bytes()))
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/messages"
)

type runFlags struct {
	output string
	quiet  bool
	cont   bool
	resume string
}

func newRunCmd(g *globalFlags, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [flags] \"task\" | -",
		Short: "Run one task headless and print the result",
		Long: `Run one task without the REPL. The task is the argument, or stdin when it is "-".

Exit codes: 0 done, 1 failed, 2 usage or configuration error, 3 a mandatory
quality gate failed after the fix rounds, 130 cancelled (Ctrl-C), 129 and 143
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
			return runTask(g, f, task, stdout, stderr)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text, json (one object at the end) or stream-json (one event per line)")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "text output: do not print progress to stderr")
	cmd.Flags().BoolVarP(&f.cont, "continue", "c", false, "continue the project's most recent session")
	cmd.Flags().StringVar(&f.resume, "resume", "", "continue the session with this ID (odin sessions lists them)")
	return cmd
}

func readTask(args []string, stdin io.Reader) (string, error) {
	if len(args) == 1 && args[0] == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return "", fmt.Errorf("reading the task from stdin: %w", err)
		}
		args = []string{string(data)}
	}
	task := strings.TrimSpace(strings.Join(args, " "))
	if task == "" {
		return "", usageError("no task given: odin run \"what to do\" (or - to read it from stdin)")
	}
	return task, nil
}

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
	if n := a.untrustedNotice(); n != "" && f.output == "text" && !f.quiet {
		fmt.Fprintln(stderr, "note:", n)
	}
	evs := live.Bus.Subscribe(ctx, 256, true)

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals()...)
	defer signal.Stop(sigs)

	r := newRenderer(f.output, f.quiet, a.root, stdout, stderr)
	sess.Submit(task, mode)
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
					return signalExit(ended, fmt.Errorf("%s", tf.Result.Error))
				}
				return statusError(tf.Result)
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
	}
	return &exitError{code: exitFailed, err: fmt.Errorf("%s", res.Error)}
}

// jsonResult is the --output json document.
type jsonResult struct {
	SessionID string `json:"session_id"`
	messages.TurnResult
	ElapsedMS int64 `json:"elapsed_ms"`
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

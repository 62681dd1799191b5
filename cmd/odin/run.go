package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/llm/tape"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/term"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

type runFlags struct {
	output string
	// Claude Code's headless flags (claudeflags.go).
	claude claudeFlags
	// stdin carries the messages of --input-format stream-json.
	stdin  io.Reader
	quiet  bool
	cont   bool
	resume string
	images []string
	// record is --record FILE; tape, when set, gets the turn's outcome.
	record string
	tape   *tape.Recorder
	// played is set by odin replay: the result is compared with the tape.
	played func(messages.TurnResult)
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
--output-format json and stream-json print Claude Code's shapes (a script
written for claude -p reads them; docs/claude-stream.md); odin-stream prints
every one of Odin's events (docs/stream-json.md). --input-format stream-json
reads user messages as JSON lines on stdin and answers each in turn, in one
session.

Exit codes: 0 done, 1 failed, 2 usage or configuration error, 3 a mandatory
quality gate failed after the fix rounds, 4 the session is in use by another
odin process (or one took it over during the run), 5 the answer was given but
could not be saved to the session store (disk full, read-only database), 6 a
budget was spent (--max-budget-usd, budget.turn, budget.session), 130
cancelled (Ctrl-C), 129 and 143 ended by SIGHUP (terminal closed) and SIGTERM:
the turn is cancelled and saved first, as with Ctrl-C.

Headless runs never wait for an answer: anything that would need approval is
denied, unless widened with --allow, --add-dir or --yolo.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch f.output {
			case "text", "json", "stream-json", "odin-stream":
			default:
				return usageError("--output-format must be text, json, stream-json or odin-stream (got %q)", f.output)
			}
			if err := f.claude.apply(g); err != nil {
				return err
			}
			var task string
			if f.claude.inputFormat == "stream-json" {
				if len(args) > 0 {
					return usageError("--input-format stream-json reads the messages from stdin; give no task argument")
				}
			} else {
				t, err := readTask(args, stdin)
				if err != nil {
					return err
				}
				task = t
			}
			if g.maxUSD < 0 {
				return usageError("--max-budget-usd must not be negative (got %v)", g.maxUSD)
			}
			f.stdin = stdin
			return runTask(g, f, task, stdout, stderr)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output-format", "o", "text", "output format: text, json (one object at the end), stream-json (Claude Code's stream) or odin-stream (Odin's events, one a line)")
	cmd.Flags().StringVar(&f.output, "output", "text", "the same as --output-format")
	_ = cmd.Flags().MarkHidden("output")
	cmd.Flags().StringVar(&f.record, "record", "", "record every model request and response (keys redacted) to FILE, for odin replay")
	f.claude.register(cmd)
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
	if f.record != "" {
		if f.tape, err = a.startTape(f.record, task, mode); err != nil {
			return err
		}
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
	if live.ModelNotice != "" && !f.quiet {
		fmt.Fprintln(stderr, "note:", live.ModelNotice)
	}
	evs := live.Bus.Subscribe(ctx, 256, true)
	a.mcpListening(live.Bus)

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals()...)
	defer signal.Stop(sigs)

	r := newRenderer(f.output, f.quiet, a.root, stdout, stderr)
	switch init := a.initEvent(live, mode); f.output {
	case "odin-stream":
		writeJSON(stdout, init)
	case "stream-json":
		r.claude.init(init.Event.(messages.Init), f.claude.permissionMode)
	}
	if live.Recovery.Resuming() > 0 {
		fmt.Fprintln(stderr, recoveryLine(live.Recovery))
		live.resume()
	}
	if len(a.cfg.MCP.Servers) > 0 && f.claude.inputFormat != "stream-json" {
		// As in the REPL: /mcp__SERVER__PROMPT renders the server's
		// prompt, @server:uri attaches a resource.
		expanded, more, notes, err := term.ExpandMCP(ctx, mcpCatalog{a.mcpManager()}, task)
		if err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		for _, n := range notes {
			if !f.quiet {
				r.notice(n)
			}
		}
		task, images = expanded, append(images, more...)
	}
	// mine are this run's inputs not yet finished (a resumed turn's are
	// not: they finish first, unprinted); with --input-format
	// stream-json, more arrive on inputs until stdin ends.
	mine, inputs := map[string]bool{}, (<-chan streamLine)(nil)
	if f.claude.inputFormat == "stream-json" {
		inputs = readStreamInputs(ctx, f.stdin)
	} else {
		mine[live.submit(task, mode, images).ID] = true
	}
	var worst error // the first failed turn's exit, for a multi-turn run
	var interrupts int
	var ended os.Signal // SIGHUP or SIGTERM: exit with its code once the turn is saved
	// After the turn: the detached agent runs it left working, which the
	// process waits for (they die with it), and the turn's exit.
	var detached map[string]string
	var turnExit error
	for {
		select {
		case sig := <-sigs:
			if detached != nil {
				r.notice(fmt.Sprintf("%s: leaving %s; they are recorded as abandoned at exit", sigName(sig), present.Plural(len(detached), "detached agent run")))
				return closeSession(live, signalExit(sig, fmt.Errorf("detached agent runs abandoned")))
			}
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
		case in, ok := <-inputs:
			if !ok {
				inputs = nil
				if len(mine) == 0 {
					return closeSession(live, worst)
				}
				continue
			}
			if in.warning != "" {
				r.notice(in.warning)
				continue
			}
			mine[live.submit(in.text, mode, nil).ID] = true
		case env, ok := <-evs:
			if !ok {
				return &exitError{code: exitFailed, err: fmt.Errorf("event stream closed")}
			}
			r.event(env)
			if af, ok := env.Event.(messages.AgentFinished); ok && detached != nil {
				delete(detached, af.Report.TaskID)
				if len(detached) == 0 {
					return closeSession(live, turnExit)
				}
			}
			if tf, ok := env.Event.(messages.TurnFinished); ok && detached == nil {
				if !mine[tf.Result.Input.ID] {
					r.resumedFinal(tf.Result) // a resumed turn, before this task's
					continue
				}
				delete(mine, tf.Result.Input.ID)
				r.final(tf.Result, sessionID)
				if err := f.finishTape(tf.Result, r); err != nil {
					return closeSession(live, err)
				}
				if ended != nil {
					return closeSession(live, signalExit(ended, fmt.Errorf("%s", tf.Result.Error)))
				}
				if err := statusError(tf.Result); err != nil && worst == nil {
					worst = err
				}
				if len(mine) > 0 || inputs != nil {
					continue
				}
				turnExit = worst
				detached = runningDetached(live.Session)
				if len(detached) == 0 {
					return closeSession(live, turnExit)
				}
				r.notice(fmt.Sprintf("waiting for %s to finish (%s): this process is their home; Ctrl-C leaves them abandoned", present.Plural(len(detached), "detached agent run"), strings.Join(slices.Sorted(maps.Values(detached)), ", ")))
			}
		}
	}
}

// runningDetached are the session's detached agent runs still working
// once a turn has ended, by ID, each with its handle and agent for the
// notice. A session that does not answer has none to wait for: it is
// closing anyway.
func runningDetached(sess *actors.Session) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	runs, err := sess.AgentRuns(ctx)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, run := range runs {
		if run.Detached && !run.Finished() {
			out[run.ID] = cmp.Or(run.Handle, run.ID) + " (" + run.Agent + ")"
		}
	}
	return out
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

func writeJSON(w io.Writer, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		// C1 and bidi controls escaped too: the same data, safe to print.
		_, _ = w.Write(termsafe.JSON(b.Bytes()))
	}
}

// recoveryLine tells the user what opening the session found of turns a
// crash interrupted.
func recoveryLine(r actors.Recovery) string {
	line := "odin: resuming an interrupted turn"
	if n := r.Resuming(); n > 1 {
		line = fmt.Sprintf("odin: resuming an interrupted turn (%d inputs)", n)
	}
	if r.Interrupted > 0 {
		line += "; its partial reply is kept, marked interrupted"
	}
	return line
}

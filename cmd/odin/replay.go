package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/llm/tape"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/messages"
)

// startTape starts `odin run --record`'s tape; every provider key the
// config can read is redacted from it.
func (a *app) startTape(path, task string, mode messages.Mode) (*tape.Recorder, error) {
	var secrets []string
	for name := range a.cfg.Providers {
		if k := a.cfg.APIKey(name); k != "" {
			secrets = append(secrets, k)
		}
	}
	rec, err := tape.Create(path, tape.Header{Task: task, Mode: string(mode), Odin: versionString(), Recorded: time.Now().UTC()}, secrets)
	if err != nil {
		return nil, usageError("--record: %v", err)
	}
	rec.Base = a.providerTransport()
	a.flags.transport = rec
	return rec, nil
}

// providerTransport is what model requests go through without a tape.
func (a *app) providerTransport() http.RoundTripper {
	if a.flags.transport != nil {
		return a.flags.transport
	}
	return http.DefaultTransport
}

// gateLines are a result's gate verdicts, one line a stage.
func gateLines(res messages.TurnResult) []string {
	if res.Gates == nil {
		return nil
	}
	var out []string
	for _, st := range res.Gates.Stages {
		verdict := "failed"
		switch {
		case st.Stage == "fix":
			verdict = "done"
		case st.Passed:
			verdict = "passed"
		}
		out = append(out, fmt.Sprintf("%s %d: %s", st.Stage, st.ShownRound(), verdict))
	}
	return out
}

// finishTape writes the recorded turn's outcome, or hands a replayed one
// to odin replay.
func (f *runFlags) finishTape(res messages.TurnResult, r *renderer) error {
	if f.played != nil {
		f.played(res)
	}
	if f.tape == nil {
		return nil
	}
	err := f.tape.Finish(tape.Outcome{Status: string(res.Status), Answer: res.Answer, Files: res.Files, Diff: res.Diff, Gates: gateLines(res)})
	f.tape = nil
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("--record %s: %w (the recording is incomplete)", f.record, err)}
	}
	return nil
}

func newReplayCmd(g *globalFlags, stdout, stderr io.Writer) *cobra.Command {
	f := &runFlags{output: "text"}
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Re-run a recorded task against its recorded model responses (no model server)",
		Long: `Re-run the task of a tape made by odin run --record, in the current
project, answering every model request with the recorded response of the
same agent, in order: nothing reaches a provider. Change a prompt, an agent
or a tool in odin.yaml or the agent files first, and the report says where
the re-run's requests first differ from the recording, and sets the
recorded and replayed answers and gate verdicts side by side.

Start from the project state the recording started from (a fresh copy, or
a clean checkout): the recorded responses assume it.

Exit codes: those of odin run, and 7 when the re-run diverged from the
recording.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tp, err := tape.Load(args[0])
			if err != nil {
				return usageError("%v", err)
			}
			player := tape.NewPlayer(tp)
			g.transport = player
			// No key is needed: nothing is sent. A placeholder address
			// keeps the default provider from asking for one.
			if g.overrides == nil {
				g.overrides = map[string]any{}
			}
			g.overrides["providers.openai.base_url"] = "http://odin-replay.invalid/v1"
			if g.mode == "" && tp.Header.Mode != "" {
				g.mode = tp.Header.Mode
			}
			var got *messages.TurnResult
			f.played = func(res messages.TurnResult) { got = &res }
			runErr := runTask(g, f, tp.Header.Task, stdout, stderr)
			diverged := printReplayReport(stderr, tp, player.Report(), got)
			if runErr != nil {
				return runErr
			}
			if diverged {
				return &exitError{code: exitDiverged, err: fmt.Errorf("the replay diverged from %s", args[0])}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "print only the answer and the replay report")
	return cmd
}

// exitDiverged is odin replay's exit when the re-run's requests or outcome
// differ from the tape.
const exitDiverged = 7

// printReplayReport says what was served, where the re-run first diverged,
// and the recorded and replayed outcomes side by side; it reports whether
// anything differed.
func printReplayReport(w io.Writer, tp *tape.Tape, rep tape.Report, got *messages.TurnResult) bool {
	fmt.Fprintf(w, "\nreplay: %d of %d recorded responses served", rep.Served, rep.Recorded)
	if rep.Unused > 0 {
		fmt.Fprintf(w, ", %d never asked for", rep.Unused)
	}
	fmt.Fprintln(w)
	diverged := rep.Unused > 0 || len(rep.Divergences) > 0
	if len(rep.Divergences) > 0 {
		fmt.Fprintf(w, "replay: first divergence: %s\n", rep.Divergences[0])
		if n := len(rep.Divergences) - 1; n > 0 {
			fmt.Fprintf(w, "replay: %s more differ\n", present.Plural(n, "request"))
		}
	} else {
		fmt.Fprintln(w, "replay: every request matched the recording")
	}
	if tp.Outcome == nil || got == nil {
		return diverged || got == nil
	}
	rec, now := *tp.Outcome, *got
	same := func(a, b string) string {
		if a == b {
			return "same"
		}
		diverged = true
		return "DIFFERS"
	}
	fmt.Fprintf(w, "replay: status  recorded %-10s replayed %-10s %s\n", rec.Status, now.Status, same(rec.Status, string(now.Status)))
	fmt.Fprintf(w, "replay: answer  %s\n", same(rec.Answer, now.Answer))
	fmt.Fprintf(w, "replay: diff    %s\n", same(rec.Diff, now.Diff))
	recGates, nowGates := rec.Gates, gateLines(now)
	fmt.Fprintf(w, "replay: gates   %s\n", same(strings.Join(recGates, "\n"), strings.Join(nowGates, "\n")))
	for i := 0; i < max(len(recGates), len(nowGates)); i++ {
		var a, b string
		if i < len(recGates) {
			a = recGates[i]
		}
		if i < len(nowGates) {
			b = nowGates[i]
		}
		fmt.Fprintf(w, "          %-28s %s\n", a, b)
	}
	return diverged
}

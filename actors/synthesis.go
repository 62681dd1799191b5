package actors

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/gates"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/prompts"
)

// synthDone carries the final answer written after the quality gates.
type synthDone struct {
	turn  int
	text  string
	usage messages.Usage
	model string
	err   error
}

// synthesisAgent is the X-Odin-Agent (and usage label) of the call that
// writes the final answer after the gates.
const synthesisAgent = "synthesis"

// synthesize ends a turn whose quality gates ran: the answer the model gave
// before the gates is only an interim note (fix rounds may have changed the
// code since), so one more model call writes the answer from the request,
// the final diff and every gate stage. status and problem are how the gates
// ended; the turn finishes with them once the answer is written. The diff
// is rendered off the mailbox, in the same goroutine as the call.
func (o *Orchestrator) synthesize(c actor.Context, status messages.TurnStatus, problem string) {
	t := o.turn
	t.interim = t.answer
	t.endStatus, t.endProblem = status, problem
	system, err := prompts.Render(prompts.Synthesis, prompts.Data{Root: o.deps.Root, Date: o.deps.now().Format("2006-01-02"),
		OS: o.deps.osName(), Mode: string(t.input.Mode)})
	if err != nil {
		o.onSynthDone(c, &synthDone{turn: t.id, err: err})
		return
	}
	root, files, tracker, m, id := o.deps.Root, append([]string(nil), t.files...), t.tracker, t.model, t.id
	report, start := t.gates.report, t.gates.first
	request, interim := t.input.Body, t.answer
	runAsync(c, t.ctx, func(ctx context.Context) any {
		diff, since := "", ""
		if tracker != nil {
			diff = tracker.Diff(files)
			if start != nil {
				since, _ = tracker.DiffSince(files, start)
			}
		}
		facts := synthesisFacts(request, interim, relPaths(root, files), diff, start != nil, since, report, status, problem)
		req := llm.Request{Model: m.ID, Agent: synthesisAgent, MaxTokens: m.MaxOutput, Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: facts},
		}}
		resp, err := m.Client.Stream(ctx, req, nil)
		if err != nil {
			return &synthDone{turn: id, err: err, model: m.ID}
		}
		return &synthDone{turn: id, text: resp.Text, usage: m.UsageOf(resp), model: m.ID}
	})
}

// onSynthDone makes the synthesized text the turn's answer, records it in
// the conversation, and finishes the turn as the gates ended it. When the
// call failed the answer is assembled from the facts instead: the user
// still learns how the gates ended.
func (o *Orchestrator) onSynthDone(c actor.Context, msg *synthDone) {
	t := o.live(msg.turn)
	if t == nil {
		return
	}
	if msg.model != "" && msg.err == nil {
		o.addUsage(synthesisAgent, msg.model, msg.usage)
		o.deps.Bus.Publish(messages.UsageUpdated{Origin: messages.Origin{Agent: synthesisAgent}, Model: msg.model, Usage: msg.usage})
		o.j.usage(o.session, synthesisAgent, msg.model, msg.usage, o.deps.now())
	}
	report := t.gates.report
	answer := strings.TrimSpace(msg.text)
	if msg.err != nil || answer == "" {
		why := "the model returned no text"
		if msg.err != nil {
			if t.ctx.Err() != nil {
				return // cancelled: cancelTurn finished the turn
			}
			why = msg.err.Error()
		}
		o.deps.Log.Warn().Str("why", why).Msg("orchestrator: could not synthesize the final answer")
		o.deps.Bus.Publish(messages.Notice{Level: "warn", Text: "could not write the final answer after the gates (" + firstLine(why) + "); reporting the facts"})
		answer = gateOutcome(report)
		if t.interim != "" {
			answer += "\n\nThe answer written before the gates ran (it may be out of date):\n\n" + strings.TrimSpace(t.interim)
		}
	}
	if t.endStatus == messages.TurnGateFailed {
		answer += "\n\n" + gateFailedFacts(t.endProblem, relPaths(o.deps.Root, t.files))
	}
	t.answer = answer
	// The conversation goes on from what the user was told: the gates'
	// outcome as a note, then the final answer.
	note := llm.Message{Role: llm.RoleUser, Content: "[Odin] The quality gates ran after your answer above. " + gateOutcome(report)}
	final := llm.Message{Role: llm.RoleAssistant, Content: answer}
	o.history = append(o.history, note, final)
	now := o.deps.now()
	o.j.appendMessage(o.session, note, "", "", now)
	o.j.appendMessage(o.session, final, msg.model, llm.FinishStop, now)
	o.finishTurn(c, t.endStatus, t.endProblem)
}

// gateOutcome states how the gates ended, in one short paragraph.
func gateOutcome(r messages.GateReport) string {
	var b strings.Builder
	gateVerdict(&b, r)
	// Why they ran, kept in the conversation: the model knows what the
	// gates looked at, and the stored session keeps the decision (the
	// viewer shows it for past turns).
	if len(r.Decision.Reasons) > 0 {
		reasons := make([]string, len(r.Decision.Reasons))
		for i, why := range r.Decision.Reasons {
			reasons[i] = strings.ReplaceAll(shorten(why, 200), "; ", ", ")
		}
		fmt.Fprintf(&b, "\nRequired because: %s.", strings.Join(reasons, "; "))
	}
	gateStages(&b, r)
	return b.String()
}

// gateVerdict writes the gates' verdict and fix rounds.
func gateVerdict(b *strings.Builder, r messages.GateReport) {
	verdict := "passed"
	if !r.Passed {
		verdict = "failed"
	}
	fmt.Fprintf(b, "Quality gates %s after %d fix round(s).", verdict, r.FixRounds)
}

// gateStages writes a line per stage round: its verdict and summary.
func gateStages(b *strings.Builder, r messages.GateReport) {
	for _, s := range r.Stages {
		round := fmt.Sprint(s.ShownRound())
		if s.MaxRounds > 0 {
			round += fmt.Sprintf(" of %d", s.MaxRounds)
		}
		fmt.Fprintf(b, "\n- %s (round %s): %s", s.Stage, round, s.Mark())
		if sum := firstLine(strings.TrimSpace(s.Summary)); sum != "" {
			fmt.Fprintf(b, " — %s", shorten(sum, 300))
		}
	}
}

// gateFailedFacts is what the user must know when a gate failed; written by
// code, not left to the model.
func gateFailedFacts(problem string, files []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**The quality gates failed**: %s.\n", strings.TrimPrefix(problem, "quality gate failed: "))
	if len(files) > 0 {
		fmt.Fprintf(&b, "The changes are still on disk (%s). ", strings.Join(files, ", "))
	} else {
		b.WriteString("The changes are still on disk. ")
	}
	b.WriteString("Review them, or run `odin undo` (/undo in the REPL) to restore the files as they were before this change.")
	return b.String()
}

// synthesisFacts is the user message of the synthesis call. The interim
// answer, diff and gate summaries come from models and files: each is in
// its own tag, and the system message says they are data.
//
// When the gates showed the change to a specialist (gated), the model is
// sent only the diff the fix rounds made after the interim answer (since),
// which describes the state before them: the whole diff again was the
// largest part of this request.
func synthesisFacts(request, interim string, files []string, diff string, gated bool, since string, r messages.GateReport, status messages.TurnStatus, problem string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The user asked:\n<request>\n%s\n</request>\n\n", strings.TrimSpace(request))
	fmt.Fprintf(&b, "Your interim answer:\n<interim_answer>\n%s\n</interim_answer>\n\n", strings.TrimSpace(interim))
	b.WriteString("Files changed (final state):\n")
	stat := diffStat(diff)
	for _, f := range files {
		if s, ok := stat[filepath.ToSlash(f)]; ok {
			fmt.Fprintf(&b, "- %s (+%d -%d)\n", f, s[0], s[1])
		} else {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	switch {
	case gated && since == "":
		b.WriteString("\nThe fix rounds changed no code after it.\n")
	case gated:
		fmt.Fprintf(&b, "\nWhat the fix rounds changed after it:\n<diff>\n%s</diff>\n", shorten(since, 12000))
	case diff != "":
		fmt.Fprintf(&b, "\nThe final diff:\n<diff>\n%s</diff>\n", shorten(diff, 12000))
	}
	// Why the gates ran is left out: the answer describes the change and
	// how the gates ended, and the user saw the reasons when they ran.
	b.WriteString("\n<gate_report>\n")
	gateVerdict(&b, r)
	gateStages(&b, r)
	// The stage lines above give each verdict and summary; the last
	// review's findings and QA's checks are listed once, each finding
	// marked when it blocks.
	if rv := r.Review; rv != nil {
		blocking := gates.BlockingIssues(*rv)
		if len(rv.Issues)+len(blocking) > 0 {
			b.WriteString("\nThe last review's findings:")
		}
		for _, is := range rv.Issues {
			mark := ""
			if slices.Contains(blocking, is) {
				mark = " (blocking)"
			}
			fmt.Fprintf(&b, "\n- [%s]%s %s:%d %s", is.Severity, mark, is.File, is.Line, is.Message)
		}
		// A review that approved nothing without a blocking finding
		// blocks by itself (BlockingIssues says why).
		for _, is := range blocking {
			if !slices.Contains(rv.Issues, is) {
				fmt.Fprintf(&b, "\n- (blocking) %s", is.Message)
			}
		}
	}
	if q := r.QA; q != nil && len(q.Checks) > 0 {
		b.WriteString("\nThe last QA checks:")
		for _, ch := range q.Checks {
			fmt.Fprintf(&b, "\n- %s `%s`: exit %d", ch.Name, ch.Command, ch.ExitCode)
		}
	}
	b.WriteString("\n</gate_report>\n\n")
	if status == messages.TurnGateFailed {
		fmt.Fprintf(&b, "The gates FAILED (%s); the change is still on disk. Say plainly what failed.\n", problem)
	}
	b.WriteString("Write the final answer now.")
	return b.String()
}

// diffStat counts added and removed lines per file of a unified diff,
// keyed by the path after a/ or b/.
func diffStat(diff string) map[string][2]int {
	out := map[string][2]int{}
	cur := ""
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "--- "):
			if p := strings.TrimPrefix(line[4:], "a/"); p != "/dev/null" {
				cur = p
			}
		case strings.HasPrefix(line, "+++ "):
			if p := strings.TrimPrefix(line[4:], "b/"); p != "/dev/null" {
				cur = p
			}
			if _, ok := out[cur]; !ok {
				out[cur] = [2]int{}
			}
		case cur == "":
		case strings.HasPrefix(line, "+"):
			s := out[cur]
			s[0]++
			out[cur] = s
		case strings.HasPrefix(line, "-"):
			s := out[cur]
			s[1]++
			out[cur] = s
		}
	}
	return out
}

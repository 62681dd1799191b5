package actors

import (
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
)

// Frontier is where a multi-step task stands: what it is for, what was
// done and what remains. The Orchestrator writes it from its own state
// (the turn's request, the todo list and the gate reports), never from the
// model's summary, just before it compacts the history, and puts it back
// verbatim after the summary: a summariser that drops the plan cannot
// make the session forget what remains.
type Frontier struct {
	// Goal is the user's request the task serves.
	Goal string
	// Criteria are the plan's acceptance criteria, each with its item.
	Criteria []string
	// Done are the completed items of the plan.
	Done []string
	// Remaining are the items pending or in progress.
	Remaining []string
	// Next is the step to take now: the item in progress, else the first
	// pending one.
	Next string
	// Evidence are the gate stages of the task and how they ended.
	Evidence []string
}

// frontierHeader starts the frontier's rendering in the history; the
// gate's refusal and the tests find it by it.
const frontierHeader = "[Odin] Task frontier (written by Odin before compacting; authoritative over the summary above):"

// Empty reports whether there is nothing to carry over: no plan and no
// gate evidence (a goal alone is a single-step request, which the summary
// keeps).
func (f Frontier) Empty() bool {
	return len(f.Criteria) == 0 && len(f.Done) == 0 && len(f.Remaining) == 0 && len(f.Evidence) == 0
}

// Render is the frontier as the model reads it, the same bytes every time
// for the same frontier.
func (f Frontier) Render() string {
	var b strings.Builder
	b.WriteString(frontierHeader + "\n")
	section := func(title string, items []string) {
		fmt.Fprintf(&b, "%s:\n", title)
		if len(items) == 0 {
			b.WriteString("- (none)\n")
			return
		}
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", frontierLine(it))
		}
	}
	fmt.Fprintf(&b, "Goal: %s\n", frontierLine(f.Goal))
	section("Acceptance criteria", f.Criteria)
	section("Done", f.Done)
	section("Remaining", f.Remaining)
	next := f.Next
	if next == "" {
		next = "(none)"
	}
	fmt.Fprintf(&b, "Next step: %s\n", frontierLine(next))
	section("Evidence from the quality gates", f.Evidence)
	return strings.TrimRight(b.String(), "\n")
}

// frontierLine folds newlines so that an item cannot forge a section of its own.
func frontierLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// frontierOf builds the frontier from the plan's todo list, the goal and
// the gate stages seen.
func frontierOf(goal string, todos []messages.Todo, evidence []string) Frontier {
	f := Frontier{Goal: strings.TrimSpace(goal), Evidence: append([]string(nil), evidence...)}
	var firstPending string
	for _, t := range todos {
		for _, a := range t.Acceptance {
			c := a.Criterion
			if a.Command != "" {
				c += " (`" + a.Command + "`)"
			}
			f.Criteria = append(f.Criteria, c+" — for: "+t.Content)
		}
		switch t.Status {
		case "completed":
			f.Done = append(f.Done, t.Content)
		case "in_progress":
			f.Remaining = append(f.Remaining, t.Content+" (in progress)")
			if f.Next == "" {
				f.Next = t.Content
			}
		default:
			f.Remaining = append(f.Remaining, t.Content)
			if firstPending == "" {
				firstPending = t.Content
			}
		}
	}
	if f.Next == "" {
		f.Next = firstPending
	}
	return f
}

// gateEvidence renders a gate report's stages as evidence lines.
func gateEvidence(r messages.GateReport) []string {
	var out []string
	for _, s := range r.Stages {
		line := fmt.Sprintf("%s round %d: %s", s.Stage, s.Round, s.Mark())
		if s.Summary != "" {
			line += " — " + firstLine(strings.TrimSpace(s.Summary))
		}
		out = append(out, line)
	}
	return out
}

// frontier is the Orchestrator's frontier now: the running turn's request
// (else the last one) and the gate stages of the running turn (else of the
// last turn that ran gates).
func (o *Orchestrator) frontier() Frontier {
	goal, evidence := o.lastGoal, o.lastEvidence
	if t := o.turn; t != nil && t.input.Agent == "" {
		goal = t.input.Body
		if t.gates != nil {
			evidence = gateEvidence(t.gates.report)
		}
	}
	return frontierOf(goal, o.todos, evidence)
}

// rememberFrontier keeps what a finished turn adds to the frontier of a
// later compaction (/compact between turns).
func (o *Orchestrator) rememberFrontier(t *turnState) {
	if t.input.Agent != "" {
		return
	}
	o.lastGoal = t.input.Body
	if t.gates != nil {
		o.lastEvidence = gateEvidence(t.gates.report)
	}
}

// withFrontier appends the frontier written before the compaction to the
// summary that replaces the history.
func withFrontier(summary string, f Frontier) string {
	if f.Empty() {
		return summary
	}
	return summary + "\n\n" + f.Render()
}

// maxFrontierRefusals bounds how often the Orchestrator's model is sent
// back to the remaining items of its plan in one turn.
const maxFrontierRefusals = 2

// frontierRefusalPrefix starts the note that refuses a final answer.
const frontierRefusalPrefix = "[Odin] Not done yet: your plan still has remaining items"

// refuseDone is the gate on the model's final answer: while the todo list
// written in this turn has items pending or in progress, "done" is
// refused and the model is sent back to them (it may also finish them or
// take them off the list with TodoWrite, saying why). After
// maxFrontierRefusals the turn is let through, but it cannot end as done:
// t.openItems makes it end as a failed gate. It reports whether the turn
// was sent back.
func (o *Orchestrator) refuseDone(c actor.Context, t *turnState) bool {
	// A plan mode turn writes a plan to be carried out later: its items
	// are all meant to remain.
	if !t.planned || t.input.Mode != messages.ModeEdit {
		return false
	}
	f := frontierOf(t.input.Body, o.todos, nil)
	t.openItems = f.Remaining
	if len(f.Remaining) == 0 || t.frontierRefusals >= maxFrontierRefusals {
		return false
	}
	t.frontierRefusals++
	var b strings.Builder
	fmt.Fprintf(&b, "%s (refusal %d of %d):\n", frontierRefusalPrefix, t.frontierRefusals, maxFrontierRefusals)
	for _, r := range f.Remaining {
		fmt.Fprintf(&b, "- %s\n", frontierLine(r))
	}
	b.WriteString("Continue with them. If one is done or no longer needed, update the plan with TodoWrite (mark it completed, or remove it and say why) before you answer.")
	next := llm.Message{Role: llm.RoleUser, Content: b.String()}
	o.history = append(o.history, next)
	o.j.appendMessage(o.session, next, "", "", o.deps.now())
	o.deps.Bus.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("not done: %s of the plan remain; the Orchestrator continues", plural(len(f.Remaining), "item"))})
	o.callModel(c)
	return true
}

// doneStatus is how a turn the gates would end as done ends when its
// plan still has open items after every refusal: a failed gate that names
// them.
func doneStatus(t *turnState, status messages.TurnStatus, problem string) (messages.TurnStatus, string) {
	if status != messages.TurnDone || len(t.openItems) == 0 {
		return status, problem
	}
	if t.gates != nil {
		t.gates.report.Passed = false
	}
	return messages.TurnGateFailed, fmt.Sprintf("quality gate failed: the plan still has %d remaining item(s): %s",
		len(t.openItems), strings.Join(t.openItems, "; "))
}

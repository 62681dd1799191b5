package term

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// Activity is the live state of the running turn: the Orchestrator's
// phase, each running specialist (name, elapsed time, tokens, tool calls,
// last activity, gate stage) and the todo list. Events update it; Lines
// renders it for the status area. The clock is passed in, so rendering is
// deterministic. An Activity is not safe for concurrent use.
type Activity struct {
	// root is the project root: tool lines name the files inside it
	// relative to it, as the transcript and odin run do.
	root      string
	running   *messages.UserMessage
	started   time.Time
	phase     string
	outChars  int
	agents    []*agentRow
	gate      string
	gateTask  string
	todos     []messages.Todo
	approvals int
	rateUntil time.Time // the Orchestrator waits for the provider's quota
}

type agentRow struct {
	taskID, agent, desc string
	started             time.Time
	tokens              int64
	tools               int
	last                string
	restarts            int
	rateUntil           time.Time
	// usd is what the run has cost so far; budget its limits.
	usd    float64
	budget messages.Budget
	// todos is the specialist's own TodoWrite list.
	todos []messages.Todo
}

// Busy reports whether a turn is running.
func (a *Activity) Busy() bool { return a.running != nil }

// Running is the input being processed, nil when idle.
func (a *Activity) Running() *messages.UserMessage { return a.running }

// Agents is the number of specialists running.
func (a *Activity) Agents() int { return len(a.agents) }

// Apply updates the state with one event that happened at now.
func (a *Activity) Apply(ev messages.Event, now time.Time) {
	switch ev := ev.(type) {
	case messages.TurnStarted:
		*a = Activity{root: a.root}
		in := ev.Input
		a.running, a.started, a.phase = &in, now, "thinking"
	case messages.TurnFinished:
		*a = Activity{root: a.root}
	case messages.TextDelta:
		if ev.TaskID == "" {
			a.phase = "writing"
			a.outChars += len(ev.Text)
		}
	case messages.ReasoningDelta:
		if ev.TaskID == "" {
			a.phase = "thinking"
			a.outChars += len(ev.Text)
		}
	case messages.ToolStarted:
		if ev.TaskID == "" {
			a.phase = "running " + present.ToolLabelIn(a.root, ev.Name, ev.Input)
		} else if r := a.agent(ev.TaskID); r != nil {
			r.tools++
			r.last = present.ToolLabelIn(a.root, ev.Name, ev.Input)
		}
	case messages.ToolFinished:
		if ev.TaskID == "" {
			a.phase = "thinking"
		}
	case messages.AgentStarted:
		a.agents = append(a.agents, &agentRow{taskID: ev.TaskID, agent: ev.Agent, desc: ev.Description, started: now})
		a.phase = "waiting for agents"
	case messages.AgentProgress:
		if r := a.agent(ev.TaskID); r != nil {
			r.tokens, r.tools = ev.Tokens, ev.ToolCalls
			r.usd, r.budget = ev.USD, ev.Budget
			if n := len(ev.Activities); n > 0 {
				r.last = ev.Activities[n-1]
			}
			if ev.Elapsed > 0 {
				r.started = now.Add(-ev.Elapsed)
			}
		}
	case messages.UsageUpdated:
		if r := a.agent(ev.TaskID); r != nil && ev.TaskID != "" && ev.Usage.TotalTokens > r.tokens {
			r.tokens = ev.Usage.TotalTokens
		}
	case messages.AgentRestarted:
		if r := a.agent(ev.TaskID); r != nil {
			r.restarts = ev.Restart
			r.last = "restarted: " + ev.Reason
		}
	case messages.AgentFinished:
		for i, r := range a.agents {
			if r.taskID == ev.Report.TaskID {
				a.agents = append(a.agents[:i:i], a.agents[i+1:]...)
				break
			}
		}
		if len(a.agents) == 0 && a.running != nil {
			a.phase = "thinking"
		}
	case messages.GateDecided:
		if ev.Decision.ReviewRequired || ev.Decision.QARequired {
			a.gate = present.Required(ev.Decision) + " required"
		}
	case messages.GateStage:
		if ev.Done {
			a.gate, a.gateTask = "", ""
		} else {
			a.gate = present.StageRound(ev.Stage, present.Round(ev.GateStageResult), ev.MaxRounds)
			a.gateTask = ev.TaskID
		}
	case messages.RateLimited:
		until := now.Add(time.Duration(ev.WaitMS) * time.Millisecond)
		if ev.TaskID == "" {
			a.rateUntil = until
		} else if r := a.agent(ev.TaskID); r != nil {
			r.rateUntil = until
		}
	case messages.TodosUpdated:
		if ev.TaskID != "" {
			if r := a.agent(ev.TaskID); r != nil {
				r.todos = append([]messages.Todo(nil), ev.Todos...)
			}
			break
		}
		a.todos = append([]messages.Todo(nil), ev.Todos...)
	case messages.ApprovalRequested:
		a.approvals++
	case messages.ApprovalResolved:
		if a.approvals > 0 {
			a.approvals--
		}
	}
}

func (a *Activity) agent(taskID string) *agentRow {
	for _, r := range a.agents {
		if r.taskID == taskID {
			return r
		}
	}
	return nil
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Lines renders the status area: one line for the Orchestrator, one per
// running specialist, the gate stage and the todos, each cut to width.
// frame advances the spinner. Idle, it renders nothing.
func (a *Activity) Lines(th *Theme, now time.Time, width, frame int) []string {
	if a.running == nil {
		return nil
	}
	spin := th.Paint(th.Accent, spinner[frame%len(spinner)])
	phase := a.phase
	if a.approvals > 0 {
		phase = "waiting for your approval"
	} else if w := rateWait(a.rateUntil, now); w != "" {
		phase = w
	}
	head := fmt.Sprintf("%s %s %s", spin, th.Paint(th.Bold, "odin"), phase)
	meta := []string{present.Duration(now.Sub(a.started))}
	if a.outChars > 0 {
		meta = append(meta, "↓ "+present.Tokens(int64(a.outChars/4))+" tokens")
	}
	lines := []string{head + th.Paint(th.Dim, " · "+strings.Join(meta, " · "))}
	for _, r := range a.agents {
		parts := []string{present.Duration(now.Sub(r.started))}
		if r.tokens > 0 {
			parts = append(parts, present.Tokens(r.tokens)+" tok"+budgetOf(r.budget.Tokens > 0, present.Tokens(r.budget.Tokens)))
		}
		if r.tools > 0 {
			parts = append(parts, present.Plural(r.tools, "tool")+budgetOf(r.budget.ToolCalls > 0, fmt.Sprint(r.budget.ToolCalls)))
		}
		if r.usd > 0 || r.budget.USD > 0 {
			parts = append(parts, present.Cost(r.usd, false)+budgetOf(r.budget.USD > 0, fmt.Sprintf("$%.2f", r.budget.USD)))
		}
		if r.restarts > 0 {
			parts = append(parts, fmt.Sprintf("restart %d", r.restarts))
		}
		line := fmt.Sprintf("  %s %s %s%s", spin, th.Agent(r.agent), firstLine(r.desc), th.Paint(th.Dim, " · "+strings.Join(parts, " · ")))
		if w := rateWait(r.rateUntil, now); w != "" {
			line += th.Paint(th.Dim, " · "+w)
		} else if r.last != "" {
			line += th.Paint(th.Dim, " · "+firstLine(r.last))
		}
		if a.gateTask != "" && a.gateTask == r.taskID {
			line += " " + th.Paint(th.Gate, "["+a.gate+"]")
		}
		lines = append(lines, line)
		if len(r.todos) > 0 {
			lines = append(lines, th.Paint(th.Dim, "    "+todoLine(r.todos)))
		}
	}
	if a.gate != "" {
		lines = append(lines, "  "+th.Paint(th.Gate, "⚖ quality gates: "+a.gate))
	}
	if len(a.todos) > 0 {
		lines = append(lines, th.Paint(th.Dim, "  "+todoLine(a.todos)))
	}
	for i := range lines {
		lines[i] = Truncate(termsafe.Styled(lines[i]), width)
	}
	return lines
}

// rateWait is "waiting for rate limit, 3 s" while now is before until,
// counting down in whole seconds; "" after.
func rateWait(until, now time.Time) string {
	if !now.Before(until) {
		return ""
	}
	return fmt.Sprintf("waiting for rate limit, %d s", int((until.Sub(now)+time.Second-1)/time.Second))
}

// Truncate cuts a styled line to width columns with an ellipsis (width
// <= 0: unchanged), on a grapheme boundary: a multi-byte character or a
// wide one is never cut in half.
func Truncate(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// todoLine summarises a todo list: how many are done and the one in
// progress.
func todoLine(todos []messages.Todo) string {
	done, current := 0, ""
	for _, t := range todos {
		switch t.Status {
		case "completed":
			done++
		case "in_progress":
			if current == "" {
				current = t.Content
			}
		}
	}
	line := fmt.Sprintf("☐ todos %d/%d", done, len(todos))
	if current != "" {
		line += " · " + firstLine(current)
	}
	return line
}

// budgetOf is the " of LIMIT" after a spend when the run has a limit.
func budgetOf(set bool, limit string) string {
	if !set {
		return ""
	}
	return " of " + limit
}

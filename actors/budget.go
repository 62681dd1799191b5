package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// Budgets and runaway detection are the supervisor's law, not the
// prompt's: the Orchestrator, which supervises every specialist it
// spawns, checks each step of a supervised specialist before the step
// runs. A supervised specialist (Delegate.Supervised) asks with a
// stepCheck after each model response (before its tool calls run) and
// after each batch of tool results (before its next model call), and goes
// on only on a stepGo. A run over a budget is stopped and reported with a
// typed BudgetExceeded; a run that makes no progress is paused (the user
// is asked, when a front end can ask) or stopped with a typed NoProgress.

// stepCheck is a supervised specialist's question to its supervisor:
// may the next step run? Usage and toolCalls are the run's totals so far
// (this resumption), the tool calls about to run included; calls are the
// results of the batch just run.
type stepCheck struct {
	taskID    string
	seq       int
	usage     messages.Usage
	toolCalls int
	turns     int
	elapsed   time.Duration
	calls     []observedCall
}

// stepGo answers a stepCheck: go on.
type stepGo struct{ seq int }

// budgetTimer fires when a run's wall-clock budget is spent, or at once
// for a resumed run that spent its budget before.
type budgetTimer struct{ taskID string }

// runawayAnswer carries the user's answer about a paused run.
type runawayAnswer struct {
	taskID string
	seq    int
	allow  bool
	always bool // "for this session": stop watching the run
}

// step runs next once the supervisor allows it (at once when the task is
// not supervised). calls are the results of the batch just run, if any.
func (s *specialist) step(c actor.Context, calls []observedCall, next func(actor.Context)) {
	if !s.t.delegate.Supervised {
		next(c)
		return
	}
	s.stepSeq++
	s.waiting = next
	c.Send(c.Parent(), &stepCheck{taskID: s.t.delegate.TaskID, seq: s.stepSeq, usage: s.usage, toolCalls: s.toolCalls,
		turns: s.turn, elapsed: s.deps.now().Sub(s.started), calls: calls})
}

// beforeTools runs the tool calls of a model response once the
// supervisor allows it. A response that only reports is let through: the
// report is how the work done within the budget reaches the Orchestrator,
// and it costs no further model call.
func (s *specialist) beforeTools(c actor.Context, calls []llm.ToolCall, next func(actor.Context)) {
	for _, call := range calls {
		if call.Name != "Report" {
			s.step(c, nil, next)
			return
		}
	}
	next(c)
}

func (s *specialist) onStepGo(c actor.Context, msg *stepGo) {
	if s.done || msg.seq != s.stepSeq || s.waiting == nil {
		return
	}
	next := s.waiting
	s.waiting = nil
	next(c)
}

// supervision is the supervisor's state of one run.
type supervision struct {
	budget messages.Budget
	scope  messages.BudgetScope
	// base is what a resumed run spent before this resumption; last is
	// the latest stepCheck (this resumption's totals).
	base  messages.Spend
	last  stepCheck
	model string
	watch *runawayWatch
	timer *time.Timer
	// pausedFor is the verdict a paused run waits on; askCancel
	// withdraws the question about it.
	pausedFor *messages.NoProgress
	askCancel context.CancelFunc
	stopped   bool
}

// spend is the run's total: before this resumption and since.
func (sv *supervision) spend() messages.Spend {
	return sv.base.Plus(messages.Spend{Tokens: sv.last.usage.TotalTokens, ToolCalls: sv.last.toolCalls, Wall: sv.last.elapsed, USD: sv.last.usage.Cost})
}

// budgetBook is the Orchestrator's account of the session's spend, for
// the turn and session budgets. Only the Orchestrator touches it.
type budgetBook struct {
	// session is what finished turns spent, and what the session spent
	// before this process for a resumed one; turn what the running turn
	// settled so far (model calls and finished runs; running runs are
	// added from their supervision when checked).
	session messages.Spend
	turnID  int
	turn    messages.Spend
	// own is the running turn's own tool calls, and wall its elapsed
	// time, as last seen.
	own      int
	wall     time.Duration
	exceeded *messages.BudgetExceeded
}

// forTurn starts the account of turn id, folding the previous turn's into
// the session.
func (b *budgetBook) forTurn(id int) {
	if b.turnID == id {
		return
	}
	b.session = b.session.Plus(b.turn).Plus(messages.Spend{ToolCalls: b.own, Wall: b.wall})
	b.turnID, b.turn, b.own, b.wall, b.exceeded = id, messages.Spend{}, 0, 0, nil
}

// settle adds spend to the turn's account.
func (o *Orchestrator) settle(turn int, s messages.Spend) {
	o.runs.book.forTurn(turn)
	o.runs.book.turn = o.runs.book.turn.Plus(s)
}

// loadSessionSpend reads what a resumed session spent before: tokens and
// dollars from its stored totals (its specialists' included), tool calls
// and working time from its agent runs.
func loadSessionSpend(st store.Store, sessionID string, runs []messages.AgentRun) messages.Spend {
	var sp messages.Spend
	for _, r := range runs {
		sp.ToolCalls += r.ToolCalls
	}
	if st == nil {
		return sp
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s, err := st.Session(ctx, sessionID); err == nil {
		sp.Tokens, sp.USD = s.PromptTokens+s.CompletionTokens, s.Cost
	}
	return sp
}

func budgetOf(b config.Budget) messages.Budget {
	return messages.Budget{Tokens: b.Tokens, ToolCalls: b.ToolCalls, Wall: b.Wall, USD: b.USD}
}

// BudgetInput is the agent tool's budget parameter: it may only lower
// the agent's own budget.
// Its fields carry no descriptions: their names say it, and every byte of
// the agent tool's schema is in every Orchestrator request.
type BudgetInput struct {
	Tokens    int64   `json:"tokens,omitempty"`
	ToolCalls int     `json:"tool_calls,omitempty"`
	Seconds   int     `json:"wall_seconds,omitempty"`
	USD       float64 `json:"usd,omitempty"`
}

// problem says what is wrong with a budget parameter, "" when nothing.
func (b *BudgetInput) problem() string {
	if b != nil && (b.Tokens < 0 || b.ToolCalls < 0 || b.Seconds < 0 || b.USD < 0) {
		return "budget limits must not be negative"
	}
	return ""
}

func (b *BudgetInput) budget() messages.Budget {
	if b == nil {
		return messages.Budget{}
	}
	return messages.Budget{Tokens: b.Tokens, ToolCalls: b.ToolCalls, Wall: time.Duration(b.Seconds) * time.Second, USD: b.USD}
}

// supervise sets up the supervision of a run about to start: its budget
// (the agent's, lowered by what the delegation asked and, for a gate's
// run, by budget.gate), what a resumed run spent before, its runaway
// watch and its wall-clock timer. It marks the Delegate supervised, so it
// must run before the Delegate is sent.
func (o *Orchestrator) supervise(c actor.Context, run *taskRun) {
	d := run.delegate
	sv := &supervision{scope: messages.ScopeAgent, model: d.Model}
	if sv.model == "" {
		sv.model = run.def.Model
	}
	if m, err := o.deps.Models.Model(sv.model); err == nil {
		sv.model = m.ID
	}
	sv.budget = run.def.Budget.Tighter(d.Budget)
	if t := o.turn; t != nil && t.gates != nil && run.turn == t.id {
		if g := budgetOf(o.deps.Config.Budget.Gate); !g.IsZero() {
			sv.budget, sv.scope = sv.budget.Tighter(g), messages.ScopeGate
		}
	}
	if d.Resume {
		if e := o.runs.get(d.TaskID); e != nil {
			sv.base = messages.Spend{Tokens: e.Tokens, ToolCalls: e.ToolCalls, Wall: e.Wall, USD: e.USD}
		}
	}
	rw := o.deps.Config.Runaway
	if rw.Identical > 0 || rw.Window > 0 {
		sv.watch = newRunawayWatch(rw.Identical, rw.Window)
	}
	d.Supervised, d.Budget = true, sv.budget
	run.sup = sv
	system, self, id := c.ActorSystem(), c.Self(), d.TaskID
	switch {
	case sv.base.Over(sv.budget, sv.scope) != nil:
		// A resumed run that spent its budget before gets no more: it is
		// stopped as soon as its supervisor reads its next message.
		system.Root.Send(self, &budgetTimer{taskID: id})
	case sv.budget.Wall > 0:
		sv.timer = time.AfterFunc(sv.budget.Wall-sv.base.Wall, func() { system.Root.Send(self, &budgetTimer{taskID: id}) })
	}
}

// onSupervision handles the supervisor's messages, in any behaviour:
// detached runs are supervised between turns too.
func (o *Orchestrator) onSupervision(c actor.Context, msg any) {
	switch msg := msg.(type) {
	case *stepCheck:
		o.onStepCheck(c, msg)
	case *budgetTimer:
		run := o.tasks[msg.taskID]
		if run == nil || run.reported || run.sup == nil {
			return
		}
		sv := run.sup
		ex := sv.spend().Over(sv.budget, sv.scope)
		if ex == nil {
			// The timer is the measure: the run has worked its whole
			// wall budget, whatever its last step said.
			ex = &messages.BudgetExceeded{Scope: sv.scope, Limit: messages.LimitWall, Spent: sv.budget.Wall.Seconds(), Allowed: sv.budget.Wall.Seconds()}
		}
		o.stopOverBudget(c, run, ex)
	case *runawayAnswer:
		run := o.tasks[msg.taskID]
		if run == nil || run.reported || run.sup == nil || run.sup.last.seq != msg.seq {
			return
		}
		run.sup.askCancel = nil
		if !msg.allow {
			o.stopNoProgress(c, run, run.sup.pausedFor)
			return
		}
		if msg.always {
			run.sup.watch = nil
		} else {
			run.sup.watch.reset()
		}
		o.deps.Bus.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("agent run %s (%s) goes on", o.handle(run.delegate.TaskID), run.def.Name)})
		c.Send(run.pid, &stepGo{seq: msg.seq})
	}
}

// onStepCheck decides whether a supervised run's next step may run.
func (o *Orchestrator) onStepCheck(c actor.Context, msg *stepCheck) {
	run := o.tasks[msg.taskID]
	if run == nil || run.reported || run.sup == nil || c.Sender() != nil && !c.Sender().Equal(run.pid) {
		return
	}
	sv := run.sup
	sv.last = *msg
	if ex := o.overBudget(run); ex != nil {
		o.stopOverBudget(c, run, ex)
		return
	}
	if sv.watch != nil && len(msg.calls) > 0 {
		if np := sv.watch.see(msg.calls); np != nil {
			np.TaskID, np.Agent = run.delegate.TaskID, run.def.Name
			o.pause(c, run, np)
			return
		}
	}
	c.Send(run.pid, &stepGo{seq: msg.seq})
}

// overBudget returns the first budget a run's step passes: its own (or
// its gate's), the turn's or the session's.
func (o *Orchestrator) overBudget(run *taskRun) *messages.BudgetExceeded {
	if ex := run.sup.spend().Over(run.sup.budget, run.sup.scope); ex != nil {
		return ex
	}
	return o.overShared(run.turn)
}

// overShared checks the turn's and the session's budgets: what turn (if
// it is the running one) and the session settled, plus what their runs
// spent so far.
func (o *Orchestrator) overShared(turn int) *messages.BudgetExceeded {
	b := o.deps.Config.Budget
	turnB, sessB := budgetOf(b.Turn), budgetOf(b.Session)
	if turnB.IsZero() && sessB.IsZero() {
		return nil
	}
	var liveTurn, liveOther messages.Spend
	for _, r := range o.tasks {
		if r.sup == nil || r.reported {
			continue
		}
		sp := messages.Spend{Tokens: r.sup.last.usage.TotalTokens, ToolCalls: r.sup.last.toolCalls, USD: r.sup.last.usage.Cost}
		if r.turn == turn {
			liveTurn = liveTurn.Plus(sp)
		} else {
			liveOther = liveOther.Plus(sp)
		}
	}
	thisTurn := liveTurn
	if t := o.turn; t != nil && t.id == turn && !t.finished {
		o.runs.book.forTurn(t.id)
		o.runs.book.own, o.runs.book.wall = len(t.records), o.deps.now().Sub(t.started)
		thisTurn = o.runs.book.turn.Plus(liveTurn).Plus(messages.Spend{ToolCalls: o.runs.book.own, Wall: o.runs.book.wall})
		if ex := thisTurn.Over(turnB, messages.ScopeTurn); ex != nil {
			return ex
		}
	}
	return o.runs.book.session.Plus(thisTurn).Plus(liveOther).Over(sessB, messages.ScopeSession)
}

// turnOverBudget ends the running turn when its budget or the session's
// is spent; the Orchestrator asks before each of its model calls.
func (o *Orchestrator) turnOverBudget(c actor.Context) bool {
	t := o.turn
	ex := o.overShared(t.id)
	if ex == nil {
		return false
	}
	o.deps.Bus.Publish(*ex)
	o.runs.book.exceeded = ex
	o.finishTurn(c, messages.TurnBudgetExceeded, "stopped: "+ex.Text()+budgetHint(ex))
	return true
}

// budgetHint names the setting that holds a limit.
func budgetHint(ex *messages.BudgetExceeded) string {
	switch {
	case ex.Scope == messages.ScopeSession && ex.Limit == messages.LimitUSD:
		return " (--max-budget-usd or budget.session.usd)"
	case ex.Scope == messages.ScopeSession, ex.Scope == messages.ScopeTurn:
		return fmt.Sprintf(" (budget.%s.%s)", ex.Scope, ex.Limit)
	case ex.Scope == messages.ScopeGate:
		return fmt.Sprintf(" (budget.gate.%s)", ex.Limit)
	}
	return ""
}

// stopOverBudget stops a run over a budget and reports it with the typed
// verdict. A run over its own or its gate's budget is run again once on
// the small model when budget.retry_small allows it.
func (o *Orchestrator) stopOverBudget(c actor.Context, run *taskRun, ex *messages.BudgetExceeded) {
	sv := run.sup
	ex.TaskID, ex.Agent = run.delegate.TaskID, run.def.Name
	o.deps.Bus.Publish(*ex)
	text := ex.Text() + budgetHint(ex)
	r := &messages.Report{TaskID: run.delegate.TaskID, Agent: run.def.Name, Status: messages.ReportBudget,
		Summary: fmt.Sprintf("the %s specialist was stopped by its supervisor: %s", run.def.Name, text), Error: text,
		Usage: sv.last.usage, Model: sv.model, Turns: sv.last.turns, Restarts: run.crashes, Elapsed: sv.last.elapsed, Budget: ex}
	if o.retrySmall(run, ex) {
		first, orig := text, run.onReport
		run.onReport = func(c actor.Context, _ *messages.Report) {
			d := *run.delegate
			d.TaskID, d.Model, d.Supervised = o.deps.NewID(), "small", false
			o.deps.Bus.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("agent run %s (%s) stopped (%s); retrying once on the small model", o.handle(run.delegate.TaskID), run.def.Name, first)})
			o.spawnRun(c, run.def, &d, false, func(c actor.Context, r *messages.Report) {
				cp := *r
				cp.Summary = fmt.Sprintf("(retried on the small model after the first run was stopped: %s) %s", first, r.Summary)
				orig(c, &cp)
			})
		}
	}
	o.complete(c, run, r)
}

// retrySmall says whether a run stopped over ex is tried again on the
// small model: only a foreground run of the live turn over its own or
// its gate's budget, not already on the small model.
func (o *Orchestrator) retrySmall(run *taskRun, ex *messages.BudgetExceeded) bool {
	if !o.deps.Config.Budget.RetrySmall || run.background || run.detached || run.delegate.Resume || o.live(run.turn) == nil {
		return false
	}
	if ex.Scope != messages.ScopeAgent && ex.Scope != messages.ScopeGate {
		return false
	}
	model := run.delegate.Model
	if model == "" {
		model = run.def.Model
	}
	return model != "small"
}

// pause holds a run that makes no progress: the user is asked whether it
// may go on when a front end can ask (Deps.Approver); a headless run is
// stopped with the reason.
func (o *Orchestrator) pause(c actor.Context, run *taskRun, np *messages.NoProgress) {
	o.deps.Bus.Publish(*np)
	run.sup.pausedFor = np
	ap := o.deps.Approver
	if ap == nil {
		o.stopNoProgress(c, run, np)
		return
	}
	// The run's deadline still holds while it waits (taskExpired).
	ctx, cancel := context.WithTimeout(context.Background(), run.delegate.Timeout)
	run.sup.askCancel = cancel
	// The REPL shows it as "search asks to run on (paused)", the verdict,
	// and what each answer does.
	req := policy.Request{Tool: "on (paused)", Subject: np.Text(),
		Findings: []policy.Finding{{Action: policy.Ask, Reason: "the supervisor paused it (runaway in odin.yaml); allow once: it goes on; for the session: it is no longer watched; deny: it is stopped"}},
		Origin:   messages.Origin{Agent: run.def.Name, TaskID: run.delegate.TaskID}}
	id, seq := run.delegate.TaskID, run.sup.last.seq
	runAsync(c, ctx, func(ctx context.Context) any {
		defer cancel()
		d, err := ap.Approve(ctx, req)
		return &runawayAnswer{taskID: id, seq: seq, allow: err == nil && d != policy.Reject, always: d == policy.AllowSession}
	})
}

// stopNoProgress stops a runaway run and reports it with the verdict.
func (o *Orchestrator) stopNoProgress(c actor.Context, run *taskRun, np *messages.NoProgress) {
	sv := run.sup
	r := &messages.Report{TaskID: run.delegate.TaskID, Agent: run.def.Name, Status: messages.ReportNoProgress,
		Summary: fmt.Sprintf("the %s specialist was stopped by its supervisor: %s", run.def.Name, np.Text()), Error: np.Text(),
		Usage: sv.last.usage, Model: sv.model, Turns: sv.last.turns, Restarts: run.crashes, Elapsed: sv.last.elapsed, NoProgress: np}
	o.complete(c, run, r)
}

// settleRun closes a run's supervision when it ends: its timers and any
// question about it stop, and its tool calls count for the turn and the
// session (its tokens and dollars come with its report's usage).
func (o *Orchestrator) settleRun(run *taskRun, r *messages.Report) {
	sv := run.sup
	if sv == nil || sv.stopped {
		return
	}
	sv.stopped = true
	if sv.timer != nil {
		sv.timer.Stop()
	}
	if sv.askCancel != nil {
		sv.askCancel()
	}
	if o.live(run.turn) != nil && !run.detached {
		o.settle(run.turn, messages.Spend{ToolCalls: sv.last.toolCalls})
	} else {
		o.runs.book.session.ToolCalls += sv.last.toolCalls
		o.runs.book.session.Tokens += r.Usage.TotalTokens
		o.runs.book.session.USD += r.Usage.Cost
	}
	if e := o.runs.get(run.delegate.TaskID); e != nil {
		e.USD = sv.base.USD + r.Usage.Cost
		e.Wall = sv.base.Wall + r.Elapsed
		e.ToolCalls = max(e.ToolCalls, sv.base.ToolCalls+sv.last.toolCalls)
	}
}

// progressSpend updates a run's registry entry with its dollars and time.
func (o *Orchestrator) progressSpend(p *messages.AgentProgress) {
	run, e := o.tasks[p.TaskID], o.runs.get(p.TaskID)
	if run == nil || run.sup == nil || e == nil {
		return
	}
	e.USD, e.Wall = run.sup.base.USD+p.USD, run.sup.base.Wall+p.Elapsed
}

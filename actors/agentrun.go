package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// agentRuns is a session's agent-run registry (the seed's AgentMonitor):
// every specialist run — delegations, gate tasks, resumed runs — with its
// status, times, tokens and last activities, across turns. Only the
// Orchestrator touches it; it is shared across the Orchestrator's restarts
// and written through to the store.
type agentRuns struct {
	byID     map[string]*messages.AgentRun
	byHandle map[string]string // handle → ID
	order    []string
	// book is the session's spend for its budgets (budget.go).
	book *budgetBook
}

func newAgentRuns(prior []messages.AgentRun) *agentRuns {
	r := &agentRuns{byID: map[string]*messages.AgentRun{}, byHandle: map[string]string{}, book: &budgetBook{}}
	for _, run := range prior {
		r.add(run)
	}
	return r
}

// get finds a run by ID or handle.
func (r *agentRuns) get(id string) *messages.AgentRun {
	if run := r.byID[id]; run != nil {
		return run
	}
	return r.byID[r.byHandle[id]]
}

// nextHandle names a new run of agent: its name and the run's number in
// the session (search-3), short and stable for the model to quote.
func (r *agentRuns) nextHandle(agent string) string {
	return fmt.Sprintf("%s-%d", agent, len(r.order)+1)
}

func (r *agentRuns) add(run messages.AgentRun) *messages.AgentRun {
	if prev := r.byID[run.ID]; prev != nil {
		*prev = run
		return prev
	}
	r.byID[run.ID] = &run
	if run.Handle != "" {
		r.byHandle[run.Handle] = run.ID
	}
	r.order = append(r.order, run.ID)
	return &run
}

// handle returns a run's handle, or its ID when it has none.
func (o *Orchestrator) handle(id string) string {
	if run := o.runs.get(id); run != nil && run.Handle != "" {
		return run.Handle
	}
	return id
}

// anyBackground reports whether the session has started a background
// run (a detached run is one too): until then agent_output and agent_stop
// have nothing to act on, and their definitions would ride on every
// request of the Orchestrator unused (issue 37).
func (r *agentRuns) anyBackground() bool {
	for _, run := range r.byID {
		if run.Background {
			return true
		}
	}
	return false
}

// offerRunTools adds agent_output and agent_stop to turn t's tools when a
// background run starts in it and they are not offered yet: the model's
// next request can collect or stop the run.
func (o *Orchestrator) offerRunTools(t *turnState) {
	if _, ok := t.tools.Get(AgentOutputToolName); ok {
		return
	}
	more := []tool.Tool{agentOutputTool(), agentStopTool()}
	t.extra = append(slices.Clip(t.extra), more...)
	t.tools = t.tools.With(more...)
}

// list returns copies of the runs, oldest first.
func (r *agentRuns) list() []messages.AgentRun {
	out := make([]messages.AgentRun, 0, len(r.order))
	for _, id := range r.order {
		run := *r.byID[id]
		run.Activities = slices.Clone(run.Activities)
		out = append(out, run)
	}
	return out
}

// loadAgentRuns reads a resumed session's registry. A run the store still
// has as running belonged to a process that ended: it is stopped.
func loadAgentRuns(st store.Store, sessionID string) []messages.AgentRun {
	if st == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	recs, err := st.AgentRuns(ctx, sessionID)
	if err != nil {
		return nil
	}
	var out []messages.AgentRun
	for _, rec := range recs {
		var run messages.AgentRun
		if json.Unmarshal(rec.Data, &run) != nil || run.ID == "" {
			continue
		}
		if run.Status == messages.RunRunning {
			run.Status, run.Ended = messages.RunStopped, rec.UpdatedAt
			run.Summary = "interrupted: the session ended while it ran"
		}
		out = append(out, run)
	}
	return out
}

// saveRun writes a run's registry entry through the journal.
func (j *journal) agentRun(sessionID string, run messages.AgentRun, at time.Time) {
	// Encoded where the journal writes its batch, off the Orchestrator's mailbox
	// (a fan-out saves each of its runs twice). run is a copy, and the
	// registry replaces its Activities rather than changing them in place.
	j.do(func(ctx context.Context, st store.Store) error {
		data, err := json.Marshal(run)
		if err != nil {
			return err
		}
		return st.PutAgentRun(ctx, store.AgentRunRecord{ID: run.ID, SessionID: sessionID, Data: data, UpdatedAt: at})
	})
}

// AgentRuns returns the session's agent runs, oldest first: those of
// earlier turns (and earlier processes, for a resumed session) too.
func (s *Session) AgentRuns(ctx context.Context) ([]messages.AgentRun, error) {
	timeout := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	res, err := s.system.Root.RequestFuture(s.orch, &messages.AgentRunsRequest{}, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("actors: agent runs: %w", err)
	}
	r, ok := res.(*messages.AgentRunsResponse)
	if !ok {
		return nil, fmt.Errorf("actors: agent runs: unexpected reply %T", res)
	}
	return r.Runs, nil
}

// outputWait is an agent_output call waiting for a background run.
type outputWait struct {
	runID string
	call  llm.ToolCall
	timer *time.Timer
}

// outputWaitExpired fires when an agent_output call has waited long
// enough.
type outputWaitExpired struct {
	turn   int
	callID string
}

// maxOutputWait caps how long one agent_output call waits.
const maxOutputWait = 10 * time.Minute

// agentToolFor returns the turn's agent tool, built once per set of
// agents (deriving a schema costs milliseconds).
func (o *Orchestrator) agentToolFor(agents []*AgentDefinition, mode messages.Mode) tool.Tool {
	var names []string
	for _, a := range agents {
		names = append(names, a.Name)
	}
	models := DelegationModels(o.deps.Config, o.deps.Roster)
	key := strings.Join(names, ",") + "|" + strings.Join(models, ",") + "|" + strconv.FormatBool(mode.ReadOnly())
	if o.agentTool == nil || o.agentToolKey != key {
		o.agentTool, o.agentToolKey = agentTool(agents, models, mode.ReadOnly()), key
	}
	return o.agentTool
}

// delegate starts a specialist for a call of the agent tool.
func (o *Orchestrator) delegate(c actor.Context, call llm.ToolCall) {
	t := o.turn
	in, def, problem := parseDelegation(o.agentTool, t.agents, call.Arguments)
	if problem == "" && in.Resume != "" {
		problem = o.checkResume(in)
	}
	if problem != "" {
		t.results[call.ID] = toolMessage(call, problem, true)
		return
	}
	o.startDelegate(c, t, call, def, in, nil)
}

// startDelegate runs a valid delegation's SubagentStart hooks and then
// starts its specialist, unless a hook refuses it. e is the call's entry
// when it starts while its reply still streams (earlycall.go): a call
// dropped meanwhile does not start.
func (o *Orchestrator) startDelegate(c actor.Context, t *turnState, call llm.ToolCall, def *AgentDefinition, in AgentInput, e *earlyCall) {
	o.hooks.run(c, t.ctx, policy.HookInput{Event: policy.SubagentStart, Agent: def.Name, Prompt: in.Prompt}, func(c actor.Context, hr policy.HookResult) {
		if o.live(t.id) != t || e != nil && e.dropped {
			return
		}
		if hr.Blocked {
			t.results[call.ID] = toolMessage(call, "a SubagentStart hook refused this delegation: "+strings.TrimSpace(hr.Feedback), true)
			o.maybeContinue(c)
			return
		}
		in.Prompt = withContext(in.Prompt, hr.Context)
		run := o.startDelegation(c, t, call, def, in)
		if e != nil {
			e.run = run
		}
	})
}

// checkResume says why a run cannot be resumed, "" when it can.
func (o *Orchestrator) checkResume(in AgentInput) string {
	prev := o.runs.get(in.Resume)
	switch {
	case prev == nil:
		return fmt.Sprintf("no agent run %q in this session (see the IDs the agent tool returned)", in.Resume)
	case prev.Agent != in.Agent:
		return fmt.Sprintf("run %s is a %s run; resume it with agent %q", in.Resume, prev.Agent, prev.Agent)
	case !prev.Finished():
		return fmt.Sprintf("run %s is still running; wait for it with agent_output", in.Resume)
	case o.j == nil:
		return "this session is not stored, so earlier runs cannot be resumed"
	}
	return ""
}

// startDelegation spawns the specialist of an agent tool call, in the
// foreground (its report is the call's result) or in the background (the
// call returns the run's ID at once).
func (o *Orchestrator) startDelegation(c actor.Context, t *turnState, call llm.ToolCall, def *AgentDefinition, in AgentInput) *taskRun {
	d := &messages.Delegate{TaskID: o.deps.NewID(), Agent: def.Name, Description: in.Description, Brief: in.Prompt,
		Mode: t.input.Mode, Timeout: timeoutFor(def, in.Timeout), SessionID: o.session, ParentCallID: call.ID,
		Model: in.Model, Thoroughness: messages.Thoroughness(in.Thoroughness), Context: messages.ContextMode(in.Context), Files: in.Files}
	namedFiles(in.OnlyFiles)(d)
	d.Isolation = def.Isolation
	switch in.Isolation {
	case "none":
		d.Isolation = messages.IsolationNone
	case string(messages.IsolationWorktree):
		d.Isolation = messages.IsolationWorktree
	}
	d.MaxTurns = turnBudget(def, d.Thoroughness, in.MaxTurns)
	d.Budget = in.Budget.budget()
	switch d.Context {
	case messages.ContextFork:
		d.ContextText = forkContext(o.history)
	case messages.ContextScoped:
		d.ContextText = scopedSummary(o.history)
	}
	if in.Resume != "" {
		d.TaskID, d.Resume = o.runs.get(in.Resume).ID, true
	}
	var run *taskRun
	run = o.spawnRun(c, def, d, in.Background, func(c actor.Context, r *messages.Report) {
		switch {
		case run.detached:
			o.landDetached(c, run, r)
		case run.background:
			o.backgroundDone(c, t, run, r)
		default:
			if o.live(t.id) != t {
				return
			}
			o.noteReport(t, def, r)
			o.markRecord(call.ID, tool.Result{IsError: r.Status != messages.ReportOK, Files: r.Files})
			t.results[call.ID] = toolMessage(call, reportForModel(r, o.handle(r.TaskID)), r.Status != messages.ReportOK)
			o.maybeContinue(c)
		}
	})
	if in.Background {
		o.offerRunTools(t)
		t.background = append(t.background, run)
		h := o.handle(d.TaskID)
		t.results[call.ID] = toolMessage(call, fmt.Sprintf("Started %s run %s in the background (%q). Keep working; collect its report with agent_output {\"id\": %q}, or stop it with agent_stop. This turn does not end while it runs unless you detach it.",
			def.Name, h, in.Description, h), false)
		o.maybeContinue(c)
	}
	return run
}

// noteReport keeps what the gates need from a delegation's report.
func (o *Orchestrator) noteReport(t *turnState, def *AgentDefinition, r *messages.Report) {
	if failing, ok := def.testsFailing(r); ok {
		t.testFailed = failing
	}
}

// spawnRun starts a specialist from its kind and sends it the Delegate,
// with a deadline, and enters it in the registry.
func (o *Orchestrator) spawnRun(c actor.Context, def *AgentDefinition, d *messages.Delegate, background bool, onReport func(actor.Context, *messages.Report)) *taskRun {
	t := o.turn
	if t.tracker != nil {
		d.ChangeSet = fmt.Sprintf("%s/%d", o.session, t.id)
		o.host.changeSets.put(d.ChangeSet, t.tracker)
	}
	run := &taskRun{delegate: d, def: def, callID: d.ParentCallID, onReport: onReport, turn: t.id, background: background}
	o.tasks[d.TaskID] = run
	modelName := def.Model
	if d.Model != "" {
		modelName = d.Model
	}
	model := modelName
	if m, err := o.deps.Models.Model(modelName); err == nil {
		model = m.ID
	}
	now := o.deps.now()
	o.deps.Bus.Publish(messages.AgentStarted{TaskID: d.TaskID, Agent: def.Name, Description: d.Description, Model: model, Timeout: d.Timeout})
	entry := messages.AgentRun{ID: d.TaskID, Handle: o.runs.nextHandle(def.Name), Agent: def.Name, Description: d.Description,
		Status: messages.RunRunning, Background: background, Started: now}
	if prev := o.runs.get(d.TaskID); d.Resume && prev != nil {
		entry.Handle = prev.Handle
		entry.Resumes = prev.Resumes + 1
		entry.Tokens, entry.ToolCalls = prev.Tokens, prev.ToolCalls
		entry.USD, entry.Wall = prev.USD, prev.Wall
		run.baseTokens, run.baseCalls = prev.Tokens, prev.ToolCalls
	} else {
		o.j.createChild(store.Session{ID: d.TaskID, ParentID: o.session, Project: o.deps.Root, Agent: def.Name,
			Title: d.Description, Mode: string(d.Mode), Model: model, CreatedAt: now, UpdatedAt: now})
	}
	o.saveRun(o.runs.add(entry))
	props := newSpecialistProps(o.host)
	switch {
	case o.deps.Remote != nil && def.RunsRemote(d):
		props = o.deps.Remote.Props(RemoteRun{Agent: def, Root: o.deps.Root, DenyRead: o.deps.DenyRead, Local: props, Publish: o.deps.Bus.Publish,
			Supervisor: specialistSupervisor(o.deps)})
	case o.deps.Remote != nil && def.Remote():
		// A writer's task without a worktree would write the worker's
		// throw-away tree.
		o.deps.Bus.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("%s task %s runs here: it writes in the project (isolation: none), which only the session's node can", def.Name, d.TaskID)})
	}
	run.pid = c.SpawnPrefix(props, "specialist-"+def.Name)
	if o.byPID == nil {
		o.byPID = map[string]*taskRun{}
	}
	o.byPID[run.pid.Id] = run
	o.supervise(c, run)
	c.Send(run.pid, d)
	system, self, id := c.ActorSystem(), c.Self(), t.id
	run.timer = time.AfterFunc(d.Timeout+taskGrace, func() {
		system.Root.Send(self, &taskExpired{turn: id, taskID: d.TaskID})
	})
	return run
}

func (o *Orchestrator) saveRun(run *messages.AgentRun) {
	o.j.agentRun(o.session, *run, o.deps.now())
}

// onProgress updates a run's registry entry from its specialist.
func (o *Orchestrator) onProgress(p *messages.AgentProgress) {
	run := o.runs.get(p.TaskID)
	if run == nil || run.Finished() {
		return
	}
	base := 0
	var baseTokens int64
	if tr := o.tasks[p.TaskID]; tr != nil {
		base, baseTokens = tr.baseCalls, tr.baseTokens
	}
	run.Tokens, run.ToolCalls = baseTokens+p.Tokens, base+p.ToolCalls
	run.Activities = slices.Clone(p.Activities)
	o.progressSpend(p)
}

// finishRun closes a run's registry entry.
func (o *Orchestrator) finishRun(id string, status messages.AgentRunStatus, r *messages.Report) {
	run := o.runs.get(id)
	if run == nil {
		return
	}
	run.Status, run.Ended = status, o.deps.now()
	if r != nil {
		run.Summary = capTokens(r.Summary, reportNotes)
		if r.Usage.TotalTokens > 0 {
			if tr := o.tasks[id]; tr != nil {
				run.Tokens = tr.baseTokens + r.Usage.TotalTokens
			} else {
				run.Tokens = max(run.Tokens, r.Usage.TotalTokens)
			}
		}
	}
	o.saveRun(run)
}

// backgroundDone takes the report of a background run of turn t: waiting
// agent_output calls get it, and a turn held for its background runs
// continues once none runs.
func (o *Orchestrator) backgroundDone(c actor.Context, t *turnState, run *taskRun, r *messages.Report) {
	run.report = r
	if o.live(t.id) != t {
		return
	}
	o.noteReport(t, run.def, r)
	for callID, w := range t.waiters {
		if w.runID != run.delegate.TaskID {
			continue
		}
		w.timer.Stop()
		delete(t.waiters, callID)
		run.collected = true
		t.results[callID] = toolMessage(w.call, reportForModel(r, o.handle(r.TaskID)), r.Status != messages.ReportOK)
	}
	if t.holding {
		o.releaseHold(c, t)
		return
	}
	o.maybeContinue(c)
}

// holdForBackground is asked when the model gives its final answer: while
// a background run of the turn still runs the turn waits for it, and
// reports the model has not collected are given to it before the turn
// may end. It returns false when nothing holds the turn.
func (o *Orchestrator) holdForBackground(c actor.Context, t *turnState) bool {
	var running, uncollected int
	for _, run := range t.background {
		switch {
		case run.detached || run.collected:
		case run.report == nil:
			running++
		default:
			uncollected++
		}
	}
	if running == 0 && uncollected == 0 {
		return false
	}
	t.holding = true
	if running > 0 {
		o.deps.Bus.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("waiting for %s before the turn ends", plural(running, "background agent run"))})
		return true
	}
	o.releaseHold(c, t)
	return true
}

// releaseHold gives the model the reports of the turn's background runs
// once none runs any more, and calls it again.
func (o *Orchestrator) releaseHold(c actor.Context, t *turnState) {
	var b strings.Builder
	for _, run := range t.background {
		if run.detached || run.collected {
			continue
		}
		if run.report == nil {
			return // still running
		}
		run.collected = true
		fmt.Fprintf(&b, "\n## Run %s (%s)\n%s", o.handle(run.delegate.TaskID), run.def.Name, reportForModel(run.report, o.handle(run.delegate.TaskID)))
	}
	t.holding = false
	if b.Len() == 0 {
		return
	}
	next := llm.Message{Role: llm.RoleUser, Content: "[Odin] Background agent runs you started this turn have finished; their reports:" + b.String() + "\nTake them into account and give your final answer."}
	o.history = append(o.history, next)
	o.j.appendMessage(o.session, next, "", "", o.deps.now())
	o.callModel(c)
}

// agentOutput answers an agent_output call: the report of a finished run,
// the status of a running one, or a wait for it.
func (o *Orchestrator) agentOutput(c actor.Context, call llm.ToolCall) {
	t := o.turn
	var in AgentOutputInput
	if p := parseCall(agentOutputTool(), call.Arguments, &in); p != "" {
		t.results[call.ID] = toolMessage(call, p, true)
		return
	}
	entry := o.runs.get(in.ID)
	if entry == nil {
		t.results[call.ID] = toolMessage(call, fmt.Sprintf("no agent run %q in this session", in.ID), true)
		return
	}
	if run := o.tasks[entry.ID]; run != nil && in.Timeout > 0 && run.turn == t.id && run.background {
		wait := min(time.Duration(in.Timeout)*time.Second, maxOutputWait)
		system, self, id := c.ActorSystem(), c.Self(), t.id
		if t.waiters == nil {
			t.waiters = map[string]*outputWait{}
		}
		t.waiters[call.ID] = &outputWait{runID: entry.ID, call: call, timer: time.AfterFunc(wait, func() {
			system.Root.Send(self, &outputWaitExpired{turn: id, callID: call.ID})
		})}
		return
	}
	for _, run := range t.background {
		if run.delegate.TaskID == entry.ID && run.report != nil {
			run.collected = true
			t.results[call.ID] = toolMessage(call, reportForModel(run.report, o.handle(run.delegate.TaskID)), run.report.Status != messages.ReportOK)
			return
		}
	}
	t.results[call.ID] = toolMessage(call, describeRun(*entry, o.deps.now()), false)
}

func (o *Orchestrator) onOutputWaitExpired(c actor.Context, msg *outputWaitExpired) {
	t := o.live(msg.turn)
	if t == nil {
		return
	}
	w := t.waiters[msg.callID]
	if w == nil {
		return
	}
	delete(t.waiters, msg.callID)
	text := "still running after the wait.\n"
	if e := o.runs.get(w.runID); e != nil {
		text = describeRun(*e, o.deps.now())
	}
	t.results[msg.callID] = toolMessage(w.call, text, false)
	o.maybeContinue(c)
}

// describeRun is a run's status for the model.
func describeRun(r messages.AgentRun, now time.Time) string {
	var b strings.Builder
	id := r.Handle
	if id == "" {
		id = r.ID
	}
	fmt.Fprintf(&b, "Run %s (%s, %q): %s, %s elapsed, %d tokens, %d tool calls.", id, r.Agent, r.Description, r.Status,
		r.Elapsed(now).Round(time.Second), r.Tokens, r.ToolCalls)
	if r.Detached {
		b.WriteString(" Detached.")
	}
	if len(r.Activities) > 0 {
		b.WriteString("\nLast activities: " + strings.Join(r.Activities, "; "))
	}
	if r.Summary != "" {
		b.WriteString("\nSummary: " + r.Summary)
	}
	return b.String() + "\n"
}

// agentStop stops a background run of the turn, or detaches it.
func (o *Orchestrator) agentStop(c actor.Context, call llm.ToolCall) {
	t := o.turn
	var in AgentStopInput
	if p := parseCall(agentStopTool(), call.Arguments, &in); p != "" {
		t.results[call.ID] = toolMessage(call, p, true)
		return
	}
	var run *taskRun
	if e := o.runs.get(in.ID); e != nil {
		run = o.tasks[e.ID]
	}
	if run == nil || !run.background || run.detached {
		if e := o.runs.get(in.ID); e != nil {
			t.results[call.ID] = toolMessage(call, "nothing to stop: "+describeRun(*e, o.deps.now()), false)
			return
		}
		t.results[call.ID] = toolMessage(call, fmt.Sprintf("no background agent run %q is running", in.ID), true)
		return
	}
	if in.Detach {
		run.detached = true
		e := o.runs.get(in.ID)
		e.Detached = true
		o.saveRun(e)
		o.deps.Bus.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("agent run %s (%s) detached: it keeps working after this turn", e.Handle, run.def.Name)})
		t.results[call.ID] = toolMessage(call, fmt.Sprintf("Run %s detached: it keeps working after this turn; its report will be added to the session when it finishes.", in.ID), false)
		return
	}
	run.collected = true
	r := &messages.Report{TaskID: run.delegate.TaskID, Agent: run.def.Name, Status: messages.ReportCancelled,
		Summary: fmt.Sprintf("the %s run was stopped by the Orchestrator", run.def.Name), Error: "stopped by the Orchestrator"}
	o.complete(c, run, r)
	t.results[call.ID] = toolMessage(call, fmt.Sprintf("Run %s stopped.", in.ID), false)
}

// landDetached takes the report of a run its turn left working: it is
// kept in the run's registry entry (and so in the store) until the
// session's next input carries it to the model.
func (o *Orchestrator) landDetached(c actor.Context, run *taskRun, r *messages.Report) {
	if e := o.runs.get(run.delegate.TaskID); e != nil {
		e.Pending = fmt.Sprintf("## Run %s (%s, detached)\n%s", o.handle(run.delegate.TaskID), run.def.Name, reportForModel(r, o.handle(r.TaskID)))
		o.saveRun(e)
	}
	o.deps.Bus.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("detached agent run %s (%s) finished: %s", o.handle(run.delegate.TaskID), run.def.Name, r.Status)})
}

// takeInbox prefixes an input with the reports of detached runs that
// finished since the last turn (in this process or an earlier one).
func (o *Orchestrator) takeInbox(body string) string {
	var pending []string
	for _, id := range o.runs.order {
		if e := o.runs.byID[id]; e.Pending != "" {
			pending = append(pending, e.Pending)
			e.Pending = ""
			o.saveRun(e)
		}
	}
	if len(pending) == 0 {
		return body
	}
	return "[Odin] Detached agent runs finished since your last turn; their reports:\n" + strings.Join(pending, "\n") + "\n\n" + body
}

// abandonAtExit ends, as the Orchestrator stops (the session closes: the
// end of odin run, a closed REPL or serve session), every run still
// working — detached ones above all — as abandoned at exit. Its stopping
// specialist must not be recorded as a crash past the restart limit.
func (o *Orchestrator) abandonAtExit(c actor.Context) {
	for _, run := range o.tasks {
		if !run.reported {
			o.abandonAs(c, run, messages.RunAbandoned, "abandoned at exit: the session closed while it was working")
		}
	}
}

// abandon ends a run that will not report to anyone: its turn was
// cancelled or ended.
func (o *Orchestrator) abandon(c actor.Context, run *taskRun, why string) {
	o.abandonAs(c, run, messages.RunStopped, why)
}

func (o *Orchestrator) abandonAs(c actor.Context, run *taskRun, status messages.AgentRunStatus, why string) {
	run.reported = true
	o.dropTask(run)
	if run.timer != nil {
		run.timer.Stop()
	}
	c.Stop(run.pid)
	o.finishRun(run.delegate.TaskID, status, &messages.Report{Summary: why})
}

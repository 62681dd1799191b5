package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/worktree"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/prompts"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// specialistCrashed tells the parent that a specialist is about to fail
// (and be restarted or stopped by its supervisor), and why.
type specialistCrashed struct {
	taskID  string
	reason  string
	restart int
}

// reportPending tells the parent that the model has called Report and
// only the checks before it (lint, SubagentStop hooks) remain: they do
// not count against the task's deadline.
type reportPending struct {
	taskID string
}

// task is what a specialist works on: the delegation, resolved where the
// specialist runs, plus the state that outlives a restart of the actor
// (the absolute deadline).
type task struct {
	delegate *messages.Delegate
	def      *AgentDefinition
	deadline time.Time
	maxTurns int
	tracker  ChangeTracker
	j        *journal
}

// specialistHost is what a specialist resolves its Delegate against where
// it runs: the node's dependencies (roster, models, tools, guard), the
// session's journal and the change sets open on this node.
type specialistHost struct {
	deps       *Deps
	j          *journal
	changeSets *changeSets
	prompts    promptCache
	toolSets   toolSetCache
}

// specialistCell is the state one spawned specialist keeps across
// restarts of its actor: its restart count and, once its Delegate has
// arrived, its resolved task (a restarted actor starts the task again).
type specialistCell struct {
	restarts atomic.Int32
	mu       sync.Mutex
	t        *task
	// tree is the worktree of an isolated task, kept so that a restart
	// removes it before starting again.
	tree *worktree.Tree
}

func (cell *specialistCell) task() *task {
	cell.mu.Lock()
	defer cell.mu.Unlock()
	return cell.t
}

// specialist is the one generic specialist actor. It is spawned from its
// kind alone and becomes Search, Code, Review... when its first message,
// a *messages.Delegate, names a roster entry. It runs the planner→tool
// loop off the mailbox, tells its parent its progress, and ends by
// sending exactly one *messages.Report to its parent, which then stops it.
type specialist struct {
	deps *Deps
	host *specialistHost
	cell *specialistCell
	t    *task

	restart int
	ctx     context.Context
	cancel  context.CancelFunc
	// checksCtx has no deadline: the checks run after the model called
	// Report (lint, SubagentStop hooks) use it, so a machine slow to
	// compile does not turn a delivered report into a timeout. cancel
	// cancels it too.
	checksCtx context.Context
	origin    messages.Origin
	model     Model
	tools     tools.Set
	// extras are the task's own tools (ResearchRequest, Skill), built
	// once: see agentToolsNow.
	extras  []tool.Tool
	env     *tool.Env
	small   *meteredSmall
	history []llm.Message

	turn       int
	usage      messages.Usage
	toolCalls  int
	activities []string
	files      []string
	lastText   string
	nudges     int
	stopBlocks int
	hooks      hookRunner
	started    time.Time
	done       bool
	// lint is what the lint step ran before the report (Code only).
	lint *messages.LintReport
	// tree is the worktree of an isolated task (isolation.go) and local
	// the change tracker of its writes there, for its report.
	tree  *worktree.Tree
	local *checkpoint.Tracker
	// stepSeq numbers the supervisor's checks; waiting is the step held
	// until its go-ahead (budget.go).
	stepSeq int
	waiting func(actor.Context)
}

// newSpecialistProps returns the props of one specialist: the kind, with
// no task; the task arrives as its first message.
func newSpecialistProps(host *specialistHost) *actor.Props {
	cell := &specialistCell{}
	return actor.PropsFromProducer(func() actor.Actor {
		n := int(cell.restarts.Add(1)) - 1
		return &specialist{deps: host.deps, host: host, cell: cell, restart: n}
	}, actor.WithDispatcher(warmDispatcher(actorThroughput)))
}

// Receive dispatches the specialist's messages.
func (s *specialist) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		// A restarted actor takes its task up again; a new one waits for
		// its Delegate.
		if t := s.cell.task(); t != nil {
			s.begin(c, t)
		}
	case *messages.Delegate:
		s.onDelegate(c, msg)
	case *prepared:
		s.onPrepared(c, msg)
	case *modelDone:
		s.onModelDone(c, msg)
	case *toolsDone:
		s.onToolsDone(c, msg)
	case *stepGo:
		s.onStepGo(c, msg)
	case *asyncPanic:
		s.crash(c, msg.String(), msg.stack)
	case *hookDone:
		s.hooks.done(c, msg)
	case *lintDone:
		s.onLintDone(c, msg)
	case *reportFinalized:
		s.onReportFinalized(c, msg)
	case *worktreeReady:
		s.onWorktreeReady(c, msg)
	case *patchReady:
		c.Send(c.Parent(), msg.report)
	case *actor.Stopping:
		if s.cancel != nil {
			s.cancel()
		}
		s.releaseWorktree()
	case *actor.Restarting:
		if s.cancel != nil {
			s.cancel()
		}
	case *actor.Stopped:
		if s.deps.EndRun != nil && s.t != nil {
			go s.deps.EndRun(s.t.delegate.TaskID)
		}
	case *actor.Terminated:
	default:
		s.deps.Log.Warn().Str("agent", s.name()).Str("type", fmt.Sprintf("%T", msg)).Msg("specialist: unknown message")
	}
}

// crash tells the parent, then fails inside Receive so the supervisor
// restarts or stops this actor.
func (s *specialist) crash(c actor.Context, reason, stack string) {
	s.deps.Log.Error().Str("agent", s.t.def.Name).Str("task", s.t.delegate.TaskID).Str("stack", stack).Msg(reason)
	c.Send(c.Parent(), &specialistCrashed{taskID: s.t.delegate.TaskID, reason: reason, restart: s.restart})
	if s.cancel != nil {
		s.cancel()
	}
	panic(fmt.Sprintf("specialist %s crashed: %s", s.t.def.Name, reason))
}

func (s *specialist) name() string {
	if s.t == nil {
		return "(no task)"
	}
	return s.t.def.Name
}

// onDelegate resolves a Delegate where the specialist runs — its roster
// entry, model, tools, guard and change set — and starts the task.
func (s *specialist) onDelegate(c actor.Context, d *messages.Delegate) {
	if s.cell.task() != nil {
		s.deps.Log.Warn().Str("task", d.TaskID).Msg("specialist: a second Delegate ignored")
		return
	}
	def, ok := s.deps.Roster.Get(d.Agent)
	if !ok {
		c.Send(c.Parent(), &messages.Report{TaskID: d.TaskID, Agent: d.Agent, Status: messages.ReportFailed,
			Summary: fmt.Sprintf("no agent %q in the roster", d.Agent), Error: fmt.Sprintf("no agent %q in the roster", d.Agent)})
		return
	}
	if d.Model != "" {
		cp := *def
		cp.Model = d.Model
		def = &cp
	}
	t := &task{delegate: d, def: def, deadline: s.deps.now().Add(d.Timeout), maxTurns: def.MaxTurns, j: s.host.j}
	if d.MaxTurns > 0 {
		t.maxTurns = d.MaxTurns
	}
	if d.ChangeSet != "" {
		t.tracker = s.host.changeSets.get(d.ChangeSet)
	}
	s.cell.mu.Lock()
	s.cell.t = t
	s.cell.mu.Unlock()
	s.begin(c, t)
}

// prepared carries what a specialist read before its first model call:
// the earlier transcript of a resumed run and the files of a scoped task.
type prepared struct {
	prior []llm.Message
	files string
	err   error
}

func (s *specialist) begin(c actor.Context, t *task) {
	if t.isolated() && s.tree == nil {
		s.startWorktree(c, t)
		return
	}
	s.t = t
	d, def := t.delegate, t.def
	s.hooks = hookRunner{deps: s.deps, session: d.SessionID}
	s.started = s.deps.now()
	s.origin = messages.Origin{Agent: def.Name, TaskID: d.TaskID}
	base, cancelBase := context.WithCancel(context.Background())
	ctx, cancelDeadline := context.WithDeadline(base, t.deadline)
	s.ctx, s.checksCtx = ctx, base
	s.cancel = func() { cancelDeadline(); cancelBase() }
	m, err := s.deps.Models.Model(def.Model)
	if err != nil {
		s.finish(c, messages.ReportFailed, "", fmt.Sprintf("model %q: %v", def.Model, err), nil)
		return
	}
	s.model = m
	s.tools = s.agentToolsNow(c)
	tracker := s.tracker()
	var before func(string) error
	if tracker != nil {
		before = tracker.BeforeWrite
	}
	var intend func(string, []byte) error
	if iw, ok := tracker.(interface{ IntendWrite(string, []byte) error }); ok {
		intend = iw.IntendWrite
	}
	s.small = newMeteredSmall(s.deps.Small)
	guard, deny, editor := confinedGuard(s.deps.Root, def, d, s.deps.Guard(def.Name, d.TaskID)), s.deps.DenyRead, s.deps.Editor
	if s.tree != nil {
		// The editor's buffers are the project's files, not the copies.
		guard, editor = worktreeGuard{inner: guard, project: s.deps.Root, tree: s.tree.Root}, nil
		if deny != nil {
			deny = worktreeDeny{inner: deny, project: s.deps.Root, tree: s.tree.Root}
		}
	}
	s.env = &tool.Env{Root: s.root(), Agent: def.Name, AgentID: d.TaskID, SessionID: d.SessionID,
		Mode: string(s.mode()), Reads: tool.NewReadState(), Guard: guard, DenyRead: deny,
		BeforeWrite: before, IntendWrite: intend, BeforeCommand: beforeCommand(tracker), Editor: editor, Locks: s.deps.Locks, ReadOnlyCommands: def.WriteScope != WriteAny, Done: ctx.Done(), Publish: func(ev any) {
			if e, ok := ev.(messages.Event); ok {
				s.deps.Bus.Publish(e)
			}
		}}
	if s.small != nil {
		s.env.Small = s.small
	}
	if !d.Resume && len(d.Files) == 0 {
		s.onPrepared(c, &prepared{})
		return
	}
	s.prepare(c)
}

// prepare reads, off the mailbox, the stored transcript of a resumed run
// (through the journal, so after every write still queued) and the files
// of a scoped task (through the specialist's own path guard).
func (s *specialist) prepare(c actor.Context) {
	d, env, self, system := s.t.delegate, s.env, c.Self(), c.ActorSystem()
	readFiles := func(ctx context.Context) string { return scopedFiles(ctx, env, d.Files) }
	if !d.Resume {
		runAsync(c, s.ctx, func(ctx context.Context) any { return &prepared{files: readFiles(ctx)} })
		return
	}
	if s.t.j == nil {
		s.onPrepared(c, &prepared{err: errors.New("resuming a run needs the session store, and this session has none")})
		return
	}
	ctx := s.ctx
	s.t.j.afterWrites(func(sctx context.Context, st store.Store) error {
		msgs, err := st.Messages(sctx, d.TaskID)
		p := &prepared{prior: store.LLMMessages(msgs), err: err}
		if err == nil {
			p.files = readFiles(ctx)
		}
		system.Root.Send(self, p)
		return nil
	})
}

func (s *specialist) onPrepared(c actor.Context, p *prepared) {
	if s.done {
		return
	}
	d := s.t.delegate
	if p.err != nil {
		s.finish(c, messages.ReportFailed, "", "could not load the run to resume: "+p.err.Error(), nil)
		return
	}
	system, err := s.systemPrompt()
	if err != nil {
		s.finish(c, messages.ReportFailed, "", err.Error(), nil)
		return
	}
	// The role goes with the task, after the tools: the system message is
	// the preamble every specialist shares, so the system message and the
	// shared tools that follow it are one cached prefix across agents.
	preamble, role := prompts.SplitRole(system)
	task := taskText(d, p.files)
	first := llm.Message{Role: llm.RoleUser, Content: task}
	if s.tree != nil {
		task += isolationNote(s.deps.Root, s.tree.Root)
		first.Content = task
	}
	if role != "" {
		first.Content, first.Typed = role+"\n# Your task\n"+task, task
	}
	// Room for the task and a first exchange (a reply and its results, a
	// reply): grown from one message, the history was copied at each of
	// those appends, in every specialist of a fan-out.
	s.history = make([]llm.Message, 0, len(p.prior)+5)
	s.history = append(s.history, llm.Message{Role: llm.RoleSystem, Content: preamble})
	s.history = append(s.history, p.prior...)
	if s.restart == 0 {
		s.history = append(s.history, first)
		s.t.j.appendMessage(d.TaskID, first, "", "", s.started)
	} else {
		if !d.Resume {
			s.history = append(s.history, first)
		}
		s.t.j.appendMessage(d.TaskID, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("[restart %d after a crash: starting the task again]", s.restart)}, "", "", s.started)
	}
	s.callModel(c)
}

func (s *specialist) systemPrompt() (string, error) {
	def := s.t.def
	_, search := s.tools.Get("WebSearch")
	data := prompts.Data{Root: s.root(), Date: s.deps.now().Format("2006-01-02"), OS: s.deps.osName(),
		Mode: string(s.mode()), AgentName: def.Name, Custom: def.Custom, WebSearch: search}
	if !def.NoInstructions {
		data.Instructions = s.deps.Instructions
	}
	switch def.WriteScope {
	case WriteTests:
		data.WriteScope = "test files such as *_test.go, *.test.ts, *.spec.js, or files under test/ and tests/"
	case WriteDocs:
		data.WriteScope = "documentation such as *.md, *.rst, *.txt, and text or images under docs/; not ODIN.md, AGENTS.md, CLAUDE.md, nor build code such as docs/conf.py or a Makefile (the Code agent writes files that are executed)"
	}
	name := def.Template
	if def.Custom != "" {
		name = prompts.CustomAgent
	}
	return s.host.prompts.render(name, data)
}

func (s *specialist) callModel(c actor.Context) {
	if s.deps.MCP != nil {
		s.tools = s.agentToolsNow(c)
	}
	s.turn++
	turn := s.turn
	req := llm.Request{Model: s.model.ID, Messages: s.requestMessages(), Tools: offeredDefs(s.tools, s.t.def.OnDemand, s.history), MaxTokens: s.model.MaxOutput, Agent: s.t.def.Name, TextOnly: s.model.NoImages,
		MaxToolArguments: s.deps.Config.Context.MaxToolArgument}
	m, bus, origin := s.model, s.deps.Bus, s.origin
	runAsync(c, s.ctx, func(ctx context.Context) any {
		resp, err := streamModel(ctx, m, req, bus, origin, nil)
		return &modelDone{turn: turn, resp: resp, err: err}
	})
}

func (s *specialist) onModelDone(c actor.Context, msg *modelDone) {
	if s.done || msg.turn != s.turn {
		return
	}
	if msg.err != nil {
		s.endOnError(c, msg.err)
		return
	}
	r := msg.resp
	u := s.model.UsageOf(r)
	s.usage = s.usage.Add(u)
	s.deps.Bus.Publish(messages.UsageUpdated{Origin: s.origin, Model: s.model.ID, Usage: u})
	s.t.j.usage(s.t.delegate.TaskID, s.t.def.Name, s.model.ID, u, s.deps.now())
	am := assistantMessage(r)
	s.history = append(s.history, am)
	s.t.j.appendMessage(s.t.delegate.TaskID, am, s.model.ID, r.FinishReason, s.deps.now())
	if r.Text != "" {
		s.lastText = r.Text
	}
	s.progress(c)
	if len(r.ToolCalls) == 0 {
		if p := finishProblem(r); p != "" {
			s.finish(c, messages.ReportFailed, s.lastText, p, nil)
			return
		}
		// The task ends only through Report; remind the model twice, then
		// keep what it said rather than lose it.
		if s.nudges < 2 {
			s.nudges++
			nudge := llm.Message{Role: llm.RoleUser,
				Content: "You have not called the Report tool. Call Report now with your structured result; it is the only way your work reaches the Orchestrator."}
			s.history = append(s.history, nudge)
			s.t.j.appendMessage(s.t.delegate.TaskID, nudge, "", "", s.deps.now())
			if !s.checkLimits(c) {
				s.callModel(c)
			}
			return
		}
		s.finish(c, messages.ReportOK, r.Text, "the agent ended without a structured report", nil)
		return
	}
	calls := r.ToolCalls
	s.toolCalls += len(calls)
	for _, call := range am.ToolCalls {
		s.activities = append(s.activities, activity(s.root(), call))
	}
	if len(s.activities) > 5 {
		s.activities = s.activities[len(s.activities)-5:]
	}
	set, env, bus, origin, log := s.tools, s.env, s.deps.Bus, s.origin, s.deps.Log
	s.beforeTools(c, calls, func(c actor.Context) {
		runAsync(c, s.ctx, func(ctx context.Context) any {
			return &toolsDone{turn: msg.turn, outcomes: runCalls(ctx, log, set, env, calls, am.ToolCalls, bus, origin)}
		})
	})
}

func (s *specialist) onToolsDone(c actor.Context, msg *toolsDone) {
	if s.done || msg.turn != s.turn {
		return
	}
	for model, u := range s.small.take() {
		s.usage = s.usage.Add(u)
		s.deps.Bus.Publish(messages.UsageUpdated{Origin: s.origin, Model: model, Usage: u})
		s.t.j.usage(s.t.delegate.TaskID, s.t.def.Name, model, u, s.deps.now())
	}
	var report *callOutcome
	for i := range msg.outcomes {
		o := &msg.outcomes[i]
		if o.err != nil {
			s.crash(c, "tool "+o.call.Name+": "+o.err.Error(), "")
			return
		}
		s.files = addUnique(s.files, o.result.Files...)
		s.publishTodos(o.result)
		if o.call.Name == "Report" && !o.result.IsError && o.result.Meta != nil && report == nil {
			report = o
		}
		tr := withImages(toolMessage(o.call, o.result.Output, o.result.IsError), o.result.Images)
		s.history = append(s.history, tr.msg)
		s.t.j.appendResult(s.t.delegate.TaskID, tr, s.deps.now())
		s.t.j.tool(s.t.delegate.TaskID, s.t.def.Name, *o, o.result.Files, s.deps.now())
	}
	s.progress(c)
	if report != nil {
		// From here on the model's work is done: the parent stops
		// counting the deadline while the checks below run.
		c.Send(c.Parent(), &reportPending{taskID: s.t.delegate.TaskID})
		if !s.lintBeforeReport(c, report.result.Meta) {
			s.beforeStop(c, report.result.Meta)
		}
		return
	}
	if s.checkLimits(c) {
		return
	}
	s.step(c, observe(s.tools, msg.outcomes), s.callModel)
}

// checkLimits ends the task when a turn or token limit is reached.
func (s *specialist) checkLimits(c actor.Context) bool {
	def := s.t.def
	if s.t.maxTurns > 0 && s.turn >= s.t.maxTurns {
		s.finish(c, messages.ReportMaxTurns, s.lastText, fmt.Sprintf("reached the turn limit (%d model calls) before reporting", s.t.maxTurns), nil)
		return true
	}
	if def.MaxTokens > 0 && s.usage.TotalTokens >= def.MaxTokens {
		s.finish(c, messages.ReportMaxTokens, s.lastText, fmt.Sprintf("spent its token budget (%d of %d tokens) before reporting", s.usage.TotalTokens, def.MaxTokens), nil)
		return true
	}
	return false
}

func (s *specialist) endOnError(c actor.Context, err error) {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || s.ctx.Err() == context.DeadlineExceeded:
		s.finish(c, messages.ReportTimeout, s.lastText, fmt.Sprintf("stopped at its deadline (%s)", s.t.delegate.Timeout), nil)
	case s.ctx.Err() != nil:
		s.finish(c, messages.ReportCancelled, s.lastText, "cancelled", nil)
	default:
		s.finish(c, messages.ReportFailed, s.lastText, err.Error(), nil)
	}
}

// beforeStop runs the SubagentStop hooks: a blocking hook's feedback
// becomes the specialist's next instruction (a bounded number of times).
func (s *specialist) beforeStop(c actor.Context, result any) {
	if s.stopBlocks >= maxHookBlocks {
		s.finishWithReport(c, result)
		return
	}
	summary := ""
	if raw, err := json.Marshal(result); err == nil {
		summary = summaryOf(raw)
	}
	in := policy.HookInput{Event: policy.SubagentStop, Agent: s.t.def.Name, TaskID: s.t.delegate.TaskID, Summary: summary}
	s.hooks.run(c, s.checksCtx, in, func(c actor.Context, hr policy.HookResult) {
		if s.done {
			return
		}
		if !hr.Blocked {
			s.finishWithReport(c, result)
			return
		}
		s.stopBlocks++
		next := llm.Message{Role: llm.RoleUser, Content: "A SubagentStop hook asks you to continue before reporting:\n" + strings.TrimSpace(hr.Feedback)}
		s.history = append(s.history, next)
		s.t.j.appendMessage(s.t.delegate.TaskID, next, "", "", s.deps.now())
		if !s.checkLimits(c) {
			s.callModel(c)
		}
	})
}

// reportFinalized carries a reported result completed off the mailbox
// (the Code specialist's diffs read every changed file). by is the actor
// that asked: a restarted one, or one that finished meanwhile, drops it.
type reportFinalized struct {
	by     *specialist
	result any
}

// finishWithReport completes the model's result with the facts its schema
// leaves to Odin, off the mailbox, and then sends the report
// (onReportFinalized).
func (s *specialist) finishWithReport(c actor.Context, result any) {
	def, by := s.t.def, s
	rc := reportContext{root: s.root(), tracker: s.tracker(), files: slices.Clone(s.files), lint: s.lint}
	runAsync(c, context.Background(), func(context.Context) any {
		return &reportFinalized{by: by, result: def.finalizeReport(rc, result)}
	})
}

func (s *specialist) onReportFinalized(c actor.Context, msg *reportFinalized) {
	if msg.by != s || s.done {
		return
	}
	result := msg.result
	raw, err := json.Marshal(result)
	if err != nil {
		s.finish(c, messages.ReportFailed, "", "encode report: "+err.Error(), nil)
		return
	}
	s.finish(c, messages.ReportOK, summaryOf(raw), "", raw)
}

// publishTodos shows a specialist's own todo list (a TodoWrite result)
// under it in the front ends; the Orchestrator's list is the session's.
func (s *specialist) publishTodos(res tool.Result) {
	if todos, ok := res.Meta.([]messages.Todo); ok && !res.IsError {
		s.deps.Bus.Publish(messages.TodosUpdated{Agent: s.t.def.Name, TaskID: s.t.delegate.TaskID, Todos: todos})
	}
}

// mode is the mode the task works in: the delegation's, capped by the
// agent's permission_mode.
func (s *specialist) mode() messages.Mode { return EffectiveMode(s.t.def, s.t.delegate.Mode) }

// requestMessages is the history a model request carries, with the
// agent's critical reminder as the last message: it is re-read on every
// turn however long the task, and placed after the history so that the
// cached prefix of the request (system prompt and history) stays the same
// from one turn to the next.
func (s *specialist) requestMessages() []llm.Message {
	r := s.t.def.CriticalReminder
	if r == "" {
		return s.history
	}
	msgs := make([]llm.Message, len(s.history), len(s.history)+1)
	copy(msgs, s.history)
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: "<critical_reminder>\n" + r + "\n</critical_reminder>"})
}

// finish sends the one Report and stops the actor.
func (s *specialist) finish(c actor.Context, status messages.ReportStatus, summary, problem string, result json.RawMessage) {
	if s.done {
		return
	}
	s.done = true
	if s.cancel != nil {
		s.cancel()
	}
	if summary == "" && problem != "" {
		summary = problem
	}
	rep := &messages.Report{TaskID: s.t.delegate.TaskID, Agent: s.t.def.Name, Status: status,
		Summary: strings.TrimSpace(summary), Result: result, Files: slices.Clone(s.files), Error: problem,
		Usage: s.usage, Model: s.model.ID, Turns: s.turn, Restarts: s.restart,
		Elapsed: s.deps.now().Sub(s.started)}
	if s.tree != nil {
		s.finishIsolated(c, rep)
		return
	}
	// The parent stops this actor once it has the report: stopping here
	// would let the Terminated system message overtake the report.
	c.Send(c.Parent(), rep)
}

// tracker is the change tracker of the task's writes: the turn's change
// set, or, for an isolated task, its own in its worktree (the turn's
// change set takes the patch when the Orchestrator applies it).
func (s *specialist) tracker() ChangeTracker {
	if s.tree != nil {
		if s.local == nil {
			return nil
		}
		return s.local
	}
	return s.t.tracker
}

// progress tells the UI and the parent (its agent-run registry) how the
// task stands.
func (s *specialist) progress(c actor.Context) {
	p := messages.AgentProgress{TaskID: s.t.delegate.TaskID, Agent: s.t.def.Name,
		Tokens: s.usage.TotalTokens, ToolCalls: s.toolCalls,
		Activities: append([]string(nil), s.activities...), Elapsed: s.deps.now().Sub(s.started),
		USD: s.usage.Cost, Budget: s.t.delegate.Budget}
	s.deps.Bus.Publish(p)
	c.Send(c.Parent(), &p)
}

// summaryOf extracts the "summary" field of a structured result.
func summaryOf(raw json.RawMessage) string {
	var v struct {
		Summary string `json:"summary"`
	}
	// encoding/json's semantics by the v2 engine (as the model client
	// decodes chunks): twice as fast on every report of a fan-out.
	_ = jsonv1.Unmarshal(raw, &v)
	if v.Summary != "" {
		return v.Summary
	}
	return "reported"
}

func (d *Deps) osName() string {
	if d.OS != "" {
		return d.OS
	}
	return runtime.GOOS + "/" + runtime.GOARCH
}

package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/prompts"
	"github.com/odin-code/odin/tools"
)

// specialistCrashed tells the parent that a specialist is about to fail
// (and be restarted or stopped by its supervisor), and why.
type specialistCrashed struct {
	taskID  string
	reason  string
	restart int
}

// task is what a specialist works on: the delegation plus the state that
// outlives a restart of the actor (the absolute deadline and the restart
// count).
type task struct {
	delegate *messages.Delegate
	def      *AgentDefinition
	deadline time.Time
	restarts atomic.Int32
	tracker  ChangeTracker
	j        *journal
}

// specialist is the one generic specialist actor. A roster entry makes it
// Search, Code, Review... It runs the planner→tool loop off the mailbox
// and ends by sending exactly one *messages.Report to its parent, which
// then stops it.
type specialist struct {
	deps *Deps
	t    *task

	restart int
	ctx     context.Context
	cancel  context.CancelFunc
	origin  messages.Origin
	model   Model
	tools   tools.Set
	env     *tools.Env
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
}

func newSpecialistProps(deps *Deps, t *task) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		n := int(t.restarts.Add(1)) - 1
		return &specialist{deps: deps, t: t, restart: n, hooks: hookRunner{deps: deps, session: t.delegate.SessionID}}
	})
}

// Receive dispatches the specialist's messages.
func (s *specialist) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		s.onStarted(c)
	case *modelDone:
		s.onModelDone(c, msg)
	case *toolsDone:
		s.onToolsDone(c, msg)
	case *asyncPanic:
		s.crash(c, msg.String(), msg.stack)
	case *hookDone:
		s.hooks.done(c, msg)
	case *lintDone:
		s.onLintDone(c, msg)
	case *actor.Stopping, *actor.Restarting:
		if s.cancel != nil {
			s.cancel()
		}
	case *actor.Stopped, *actor.Terminated:
	default:
		s.deps.Log.Warn().Str("agent", s.t.def.Name).Str("type", fmt.Sprintf("%T", msg)).Msg("specialist: unknown message")
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

func (s *specialist) onStarted(c actor.Context) {
	d, def := s.t.delegate, s.t.def
	s.started = s.deps.now()
	s.origin = messages.Origin{Agent: def.Name, TaskID: d.TaskID}
	s.ctx, s.cancel = context.WithDeadline(context.Background(), s.t.deadline)
	m, err := s.deps.Models.Model(def.Model)
	if err != nil {
		s.finish(c, messages.ReportFailed, "", fmt.Sprintf("model %q: %v", def.Model, err), nil)
		return
	}
	s.model = m
	s.tools = agentTools(s.deps.allTools(), def, d.Mode)
	var before func(string) error
	if s.t.tracker != nil {
		before = s.t.tracker.BeforeWrite
	}
	var intend func(string, []byte) error
	if iw, ok := s.t.tracker.(interface{ IntendWrite(string, []byte) error }); ok {
		intend = iw.IntendWrite
	}
	s.small = newMeteredSmall(s.deps.Small)
	s.env = &tools.Env{Root: s.deps.Root, Agent: def.Name, AgentID: d.TaskID, SessionID: d.SessionID,
		Mode: string(d.Mode), Reads: tools.NewReadState(), Guard: confinedGuard(s.deps.Root, def, d, s.deps.Guard(def.Name, d.TaskID)),
		BeforeWrite: before, IntendWrite: intend, Locks: s.deps.Locks, ReadOnlyCommands: def.WriteScope != WriteAny, Publish: func(ev any) {
			if e, ok := ev.(messages.Event); ok {
				s.deps.Bus.Publish(e)
			}
		}}
	if s.small != nil {
		s.env.Small = s.small
	}
	system, err := s.systemPrompt()
	if err != nil {
		s.finish(c, messages.ReportFailed, "", err.Error(), nil)
		return
	}
	s.history = []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: d.Brief}}
	if s.restart == 0 {
		s.t.j.appendMessage(d.TaskID, s.history[1], "", "", s.started)
	} else {
		s.t.j.appendMessage(d.TaskID, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("[restart %d after a crash: starting the task again]", s.restart)}, "", "", s.started)
	}
	s.callModel(c)
}

func (s *specialist) systemPrompt() (string, error) {
	def := s.t.def
	_, search := s.tools.Get("WebSearch")
	data := prompts.Data{Root: s.deps.Root, Date: s.deps.now().Format("2006-01-02"), OS: s.deps.osName(),
		Mode: string(s.t.delegate.Mode), AgentName: def.Name, Custom: def.Custom, WebSearch: search}
	if !def.NoInstructions {
		data.Instructions = s.deps.Instructions
	}
	switch def.WriteScope {
	case WriteTests:
		data.WriteScope = "test files such as *_test.go, *.test.ts, *.spec.js, or files under test/ and tests/"
	case WriteDocs:
		data.WriteScope = "documentation such as *.md, *.rst, *.txt, or files under docs/"
	}
	name := def.Template
	if def.Custom != "" {
		name = prompts.CustomAgent
	}
	return prompts.Render(name, data)
}

func (s *specialist) callModel(c actor.Context) {
	s.turn++
	turn := s.turn
	req := llm.Request{Model: s.model.ID, Messages: s.history, Tools: s.tools.Defs(), MaxTokens: s.model.MaxOutput, Agent: s.t.def.Name}
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
	u := s.model.Usage(r.Usage, r.UsageReported)
	s.usage = s.usage.Add(u)
	s.deps.Bus.Publish(messages.UsageUpdated{Origin: s.origin, Model: s.model.ID, Usage: u})
	s.t.j.usage(s.t.delegate.TaskID, s.t.def.Name, s.model.ID, u, s.deps.now())
	am := assistantMessage(r)
	s.history = append(s.history, am)
	s.t.j.appendMessage(s.t.delegate.TaskID, am, s.model.ID, r.FinishReason, s.deps.now())
	if r.Text != "" {
		s.lastText = r.Text
	}
	s.progress()
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
	for _, call := range calls {
		s.activities = append(s.activities, activity(s.deps.Root, call))
	}
	if len(s.activities) > 5 {
		s.activities = s.activities[len(s.activities)-5:]
	}
	set, env, bus, origin := s.tools, s.env, s.deps.Bus, s.origin
	runAsync(c, s.ctx, func(ctx context.Context) any {
		return &toolsDone{turn: msg.turn, outcomes: runCalls(ctx, set, env, calls, bus, origin)}
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
		if o.call.Name == "Report" && !o.result.IsError && o.result.Meta != nil && report == nil {
			report = o
		}
		tr := toolMessage(o.call, o.result.Output, o.result.IsError)
		s.history = append(s.history, tr.msg)
		s.t.j.appendResult(s.t.delegate.TaskID, tr, s.deps.now())
		s.t.j.tool(s.t.delegate.TaskID, s.t.def.Name, *o, o.result.Files, s.deps.now())
	}
	s.progress()
	if report != nil {
		if !s.lintBeforeReport(c, report.result.Meta) {
			s.beforeStop(c, report.result.Meta)
		}
		return
	}
	if s.checkLimits(c) {
		return
	}
	s.callModel(c)
}

// checkLimits ends the task when a turn or token limit is reached.
func (s *specialist) checkLimits(c actor.Context) bool {
	def := s.t.def
	if def.MaxTurns > 0 && s.turn >= def.MaxTurns {
		s.finish(c, messages.ReportMaxTurns, s.lastText, fmt.Sprintf("reached the turn limit (%d model calls) before reporting", def.MaxTurns), nil)
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
	s.hooks.run(c, s.ctx, in, func(c actor.Context, hr policy.HookResult) {
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

func (s *specialist) finishWithReport(c actor.Context, result any) {
	if cr, ok := result.(messages.CodeResult); ok && s.t.tracker != nil {
		cr.FilesModified, cr.FilesCreated = s.t.tracker.FileChanges(s.files)
		result = cr
	}
	if cr, ok := result.(messages.CodeResult); ok {
		cr.Lint = s.lint
		if s.lint != nil {
			cr.LintPassed = s.lint.Clean
		}
		result = cr
	}
	if rr, ok := result.(messages.ResearchResult); ok {
		// A source's kind and reliability follow the seed's source
		// priority, decided from its URL, not from the model's opinion.
		for i := range rr.Sources {
			rr.Sources[i].Type, rr.Sources[i].Reliability = web.ClassifySource(rr.Sources[i].URL)
		}
		result = rr
	}
	if dr, ok := result.(messages.DocsResult); ok && len(dr.FilesUpdated) == 0 {
		dr.FilesUpdated = s.relFiles()
		result = dr
	}
	raw, err := json.Marshal(result)
	if err != nil {
		s.finish(c, messages.ReportFailed, "", "encode report: "+err.Error(), nil)
		return
	}
	s.finish(c, messages.ReportOK, summaryOf(raw), "", raw)
}

func (s *specialist) relFiles() []string {
	out := make([]string, len(s.files))
	for i, f := range s.files {
		out[i] = relPath(s.deps.Root, f)
	}
	return out
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
		Summary: strings.TrimSpace(summary), Result: result, Files: s.files, Error: problem,
		Usage: s.usage, Model: s.model.ID, Turns: s.turn, Restarts: s.restart,
		Elapsed: s.deps.now().Sub(s.started)}
	// The parent stops this actor once it has the report: stopping here
	// would let the Terminated system message overtake the report.
	c.Send(c.Parent(), rep)
}

func (s *specialist) progress() {
	s.deps.Bus.Publish(messages.AgentProgress{TaskID: s.t.delegate.TaskID, Agent: s.t.def.Name,
		Tokens: s.usage.TotalTokens, ToolCalls: s.toolCalls,
		Activities: append([]string(nil), s.activities...), Elapsed: s.deps.now().Sub(s.started)})
}

// summaryOf extracts the "summary" field of a structured result.
func summaryOf(raw json.RawMessage) string {
	var v struct {
		Summary string `json:"summary"`
	}
	_ = json.Unmarshal(raw, &v)
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

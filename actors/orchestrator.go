package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/stackgrow"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/prompts"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// Messages the Orchestrator sends itself.
type (
	// taskExpired fires when a specialist outlives its deadline plus grace.
	taskExpired struct {
		turn   int
		taskID string
	}
	// checksDone carries the results of the QA checks a gate ran.
	checksDone struct {
		turn   int
		checks []messages.QACheck
		// criteria are the acceptance criteria's command checks, in
		// criterionChecks order; coverage the before/after measurement.
		criteria []messages.QACheck
		coverage *messages.CoverageReport
	}
)

// taskGrace is how long past its deadline a specialist may take to report
// before the Orchestrator stops it and reports the timeout itself.
const taskGrace = 3 * time.Second

// taskRun is one running specialist task: of the current turn, or of an
// earlier one that left it working (detached).
type taskRun struct {
	delegate *messages.Delegate
	def      *AgentDefinition
	pid      *actor.PID
	timer    *time.Timer
	callID   string // the model's delegation call, if any
	onReport func(c actor.Context, r *messages.Report)
	crash    string
	crashes  int
	reported bool
	// checking: the model has reported and the checks before the report
	// run; checksExtended: the deadline was extended once for them.
	checking, checksExtended bool
	// turn is the turn that started it.
	turn int
	// background runs answer their call at once; their report is kept
	// until agent_output or the end of the turn collects it. A detached
	// run outlives its turn.
	background, detached, collected bool
	report                          *messages.Report
	// baseTokens and baseCalls are a resumed run's totals before this
	// resumption.
	baseTokens int64
	baseCalls  int
	// sup is the supervisor's state of the run (budget.go).
	sup *supervision
}

// turnState is everything about the input being processed. It exists only
// while the Orchestrator is busy.
type turnState struct {
	id      int
	input   messages.UserMessage
	ctx     context.Context
	cancel  context.CancelFunc
	started time.Time
	model   Model
	tools   tools.Set
	// extra are the turn's own tools (delegations, RequestReview), kept
	// to rebuild tools when the MCP tools change mid-turn.
	extra   []tool.Tool
	agents  map[string]*AgentDefinition // the agent tool's enum: name → agent
	tracker ChangeTracker

	modelTurns int
	calls      []llm.ToolCall        // calls of the current model response
	callIDs    int                   // distinct IDs among calls
	reply      *streamingReply       // the model response streaming now, persisted as it arrives
	results    map[string]toolResult // call ID → tool message
	// background are the turn's background runs; waiters the agent_output
	// calls waiting for one; holding is set while the model has answered
	// and the turn waits for its background runs.
	background []*taskRun
	waiters    map[string]*outputWait
	holding    bool
	files      []string
	records    []messages.ToolCallRecord
	recordAt   map[string][]int // call ID → its positions in records
	usage      messages.Usage
	byAgent    []messages.AgentUsage
	answer     string
	interim    string // the answer written before the gates, when they ran
	planFile   string
	review     string // why the Orchestrator's model asked for review
	gates      *gateRun
	testFailed bool             // the latest Test report of the turn showed failures
	stopBlocks int              // times a Stop hook kept the turn going
	direct     *messages.Report // the report of a direct task
	compacted  bool             // the history was just compacted: do not compact again before calling
	overflowed bool             // the provider refused the context once this turn
	finished   bool
	// early are the agent calls started while the model's reply still
	// streams, by call ID (earlycall.go); readOnly caches which agents
	// may start so; marks are the report facts of calls whose record the
	// reply's end has not made yet (markRecord).
	early    map[string]*earlyCall
	halted   *streamingReply // the reply whose later calls wait for its end
	readOnly map[string]bool
	marks    map[string]tool.Result
	// endStatus and endProblem are how the gates ended the turn, kept
	// while the final answer is written.
	endStatus  messages.TurnStatus
	endProblem string
	// planned: the turn wrote the todo list; frontierRefusals counts the
	// final answers refused while it had open items, openItems are those
	// left at the last answer (frontier.go).
	planned          bool
	frontierRefusals int
	openItems        []string
}

// Orchestrator is the per-session actor that owns the conversation. Its
// mailbox is the input queue: inputs that arrive while it is busy wait in
// arrival order, each with its own mode.
type Orchestrator struct {
	deps     *Deps
	hooks    hookRunner
	j        *journal
	titled   bool
	session  string
	behavior actor.Behavior
	// system is the last rendered system prompt (see systemPrompt).
	system  struct{ mode, date, text string }
	history []llm.Message
	queue   []messages.UserMessage
	// closing is set by Session.Close: no queued input starts any more.
	closing bool
	turn    *turnState
	turnSeq int
	// compacting is the compaction in progress, if any: the data of the
	// compacting behaviour; compactSeq numbers compactions so that a late
	// result of an aborted one is recognised.
	compacting *compaction
	compactSeq int
	// lastPrompt is the prompt size the provider reported for the last
	// request, which held the first lastLen messages of history.
	lastPrompt int64
	lastLen    int
	// small meters the small model the Orchestrator's own tools use.
	small *meteredSmall
	reads *tool.ReadState
	// todos is the plan's todo list as last written; the gates check its
	// acceptance criteria.
	todos []messages.Todo
	// lastGoal and lastEvidence are the request and gate stages of the
	// last finished turn, for the frontier of a compaction between turns.
	lastGoal     string
	lastEvidence []string
	// disk counts disk work in flight off the mailbox (checkpoint commits,
	// plan writes), which Session.Close waits for.
	disk *sync.WaitGroup
	// tasks are the running specialist tasks by ID, of this turn and
	// detached ones of earlier turns; runs is the registry of every run.
	tasks map[string]*taskRun
	// byPID indexes tasks by their specialist's PID (its Id), for
	// Terminated: a fan-out's 256 would otherwise each scan the others.
	byPID map[string]*taskRun
	runs  *agentRuns
	// host is what specialists resolve their Delegate against.
	host *specialistHost
	// agentTool is the turn's agent tool, cached by its agents.
	agentTool    tool.Tool
	agentToolKey string
	// research caches research answers (see researchCache).
	research web.Cache
}

// newOrchestratorProps returns the props of a session's Orchestrator, with
// its supervision of specialists configured from deps.
func newOrchestratorProps(deps *Deps, j *journal, sessionID string, history []llm.Message, disk *sync.WaitGroup, runs *agentRuns) *actor.Props {
	sup := deps.Config.Supervision
	maxRestarts, window := sup.MaxRestarts, sup.Window
	if window <= 0 {
		window = time.Minute
	}
	strategy := actor.NewOneForOneStrategy(maxRestarts, window, func(any) actor.Directive { return actor.RestartDirective })
	return actor.PropsFromProducer(func() actor.Actor {
		o := &Orchestrator{deps: deps, j: j, session: sessionID, history: append([]llm.Message(nil), history...),
			reads: tool.NewReadState(), titled: len(history) > 0, hooks: hookRunner{deps: deps, session: sessionID},
			small: newMeteredSmall(deps.Small), disk: disk, tasks: map[string]*taskRun{}, runs: runs,
			host: &specialistHost{deps: deps, j: j, changeSets: &changeSets{}}}
		o.behavior.Become(o.idle)
		return o
	}, actor.WithSupervisor(strategy), actor.WithDispatcher(warmDispatcher(actorThroughput)))
}

// Receive delegates to the current behaviour (idle or busy).
func (o *Orchestrator) Receive(c actor.Context) { o.behavior.Receive(c) }

func (o *Orchestrator) idle(c actor.Context) {
	switch msg := c.Message().(type) {
	case *messages.UserMessage:
		o.startTurn(c, *msg)
	case *closing:
		o.closing = true
	case *CompactRequest:
		o.startCompaction(c, context.Background(), "manual", c.Sender(), func(c actor.Context, _ *CompactResult) { o.takeNext(c) })
	case *hookDone:
		o.hooks.done(c, msg)
	case *messages.QueueRequest:
		c.Respond(o.queueState())
	case *messages.RemoveQueued:
		c.Respond(o.queueState())
	case *messages.Cancel:
		// Nothing runs but detached agent runs, which the user asked for.
	case *sessionFenced:
		o.onFenced(c, msg)
	case *messages.AgentRunsRequest:
		c.Respond(&messages.AgentRunsResponse{Runs: o.runs.list()})
	case *messages.AgentProgress:
		o.onProgress(msg)
	// Detached runs report between turns; anything else is a late result
	// of a cancelled turn, which the handlers drop.
	case *messages.Report:
		o.onReport(c, msg)
	case *patchApplied:
		o.onPatchApplied(c, msg)
	case *specialistCrashed:
		o.onCrash(msg)
	case *reportPending:
		o.onReportPending(msg)
	case *actor.Terminated:
		o.onTerminated(c, msg)
	case *taskExpired:
		o.onTaskExpired(c, msg)
	case *messages.ResearchRequest:
		o.onResearchRequest(c, msg)
	case *stepCheck, *budgetTimer, *runawayAnswer:
		o.onSupervision(c, msg)
	case *actor.Stopping:
		o.abandonAtExit(c)
	case *actor.Started, *actor.Stopped, *actor.Restarting:
	case *modelDone, *toolsDone, *checksDone, *synthDone, *asyncDone, *asyncPanic, *compactDone, *turnSaved, *outputWaitExpired, *callStreamed, *streamRetried:
		// Late results of a cancelled turn.
	default:
		o.deps.Log.Warn().Str("type", fmt.Sprintf("%T", msg)).Msg("orchestrator(idle): unknown message")
	}
}

func (o *Orchestrator) busy(c actor.Context) {
	switch msg := c.Message().(type) {
	case *messages.UserMessage:
		o.enqueue(*msg)
	case *closing:
		o.closing = true
	case *messages.QueueRequest:
		c.Respond(o.queueState())
	case *messages.RemoveQueued:
		o.removeQueued(msg.ID)
		c.Respond(o.queueState())
	case *messages.Cancel:
		o.cancelTurn(c, msg.Reason)
	case *sessionFenced:
		o.onFenced(c, msg)
	case *callStreamed:
		o.onCallStreamed(c, msg)
	case *streamRetried:
		o.onStreamRetried(c, msg)
	case *modelDone:
		o.onModelDone(c, msg)
	case *toolsDone:
		o.onToolsDone(c, msg)
	case *messages.Report:
		o.onReport(c, msg)
	case *patchApplied:
		o.onPatchApplied(c, msg)
	case *messages.ResearchRequest:
		o.onResearchRequest(c, msg)
	case *specialistCrashed:
		o.onCrash(msg)
	case *reportPending:
		o.onReportPending(msg)
	case *actor.Terminated:
		o.onTerminated(c, msg)
	case *taskExpired:
		o.onTaskExpired(c, msg)
	case *messages.AgentRunsRequest:
		c.Respond(&messages.AgentRunsResponse{Runs: o.runs.list()})
	case *messages.AgentProgress:
		o.onProgress(msg)
	case *outputWaitExpired:
		o.onOutputWaitExpired(c, msg)
	case *stepCheck, *budgetTimer, *runawayAnswer:
		o.onSupervision(c, msg)
	case *hookDone:
		o.hooks.done(c, msg)
	case *compactDone:
		// A late result of a compaction aborted with its turn.
	case *CompactRequest:
		c.Respond(&CompactResult{Skipped: "a turn is running; compact when it ends"})
	case *checksDone:
		if t := o.live(msg.turn); t != nil && t.gates != nil {
			t.gates.onChecks(c, msg)
		}
	case *synthDone:
		o.onSynthDone(c, msg)
	case *asyncDone:
		if o.live(msg.turn) != nil {
			msg.then(c)
		}
	case *turnSaved:
		o.onTurnSaved(c, msg)
	case *asyncPanic:
		o.deps.Log.Error().Str("stack", msg.stack).Msg("orchestrator: " + msg.String())
		o.finishTurn(c, messages.TurnFailed, "internal error: "+msg.String())
	case *actor.Stopping:
		o.abandonAtExit(c)
	case *actor.Started, *actor.Stopped, *actor.Restarting:
	default:
		o.deps.Log.Warn().Str("type", fmt.Sprintf("%T", msg)).Msg("orchestrator(busy): unknown message")
	}
}

// enqueue queues an input that arrived while the Orchestrator was busy or
// compacting.
func (o *Orchestrator) enqueue(in messages.UserMessage) {
	o.queue = append(o.queue, in)
	o.deps.Bus.Publish(messages.InputQueued{Input: in, Position: len(o.queue)})
}

// removeQueued drops a queued input before it starts.
func (o *Orchestrator) removeQueued(id string) {
	for i, q := range o.queue {
		if q.ID == id {
			o.queue = append(o.queue[:i:i], o.queue[i+1:]...)
			// The user dropped it: over, like a cancelled turn. Left
			// accepted in the ledger, the next open of the session
			// "resumed" it and ran the input the user had removed.
			o.j.inputDone(o.session, id)
			o.deps.Bus.Publish(messages.InputRemoved{ID: id})
			return
		}
	}
}

// gating is the behaviour while a turn's quality gates (and the final
// answer after them) run, stacked over busy until the turn ends. The model
// loop is over, so it answers /compact itself and drops the loop's late
// results; everything else — inputs and queue edits (queued as in busy),
// Cancel, the pipeline's reports, checks and synthesized answer — is
// busy's.
func (o *Orchestrator) gating(c actor.Context) {
	switch c.Message().(type) {
	case *CompactRequest:
		c.Respond(&CompactResult{Skipped: "the quality gates are running; compact when the turn ends"})
	case *modelDone, *toolsDone:
		// Late results of the model loop, which ended before the gates.
	default:
		o.busy(c)
	}
}

func (o *Orchestrator) queueState() *messages.QueueState {
	qs := &messages.QueueState{Queued: append([]messages.UserMessage{}, o.queue...)}
	if o.turn != nil {
		in := o.turn.input
		qs.Running = &in
	}
	return qs
}

// live returns the running turn if it is turn id and not finished, else
// nil. It is the one test every continuation makes: a result that arrives
// from off the mailbox (a model call, tool runs, checks, a hook, a timer, a
// specialist's report) may belong to a turn that was cancelled or has
// ended, and must then be dropped.
func (o *Orchestrator) live(id int) *turnState {
	if t := o.turn; t != nil && t.id == id && !t.finished {
		return t
	}
	return nil
}

func (o *Orchestrator) startTurn(c actor.Context, in messages.UserMessage) {
	// A turn's start goes deep (tool schemas by reflection, the first
	// request): grown here, the mailbox's fresh stack is copied once,
	// shallow (internal/stackgrow).
	stackgrow.To32K()
	o.behavior.Become(o.busy)
	o.turnSeq++
	t := &turnState{id: o.turnSeq, input: in, started: o.deps.now(), results: map[string]toolResult{}}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	o.turn = t
	o.deps.Bus.Publish(messages.TurnStarted{Input: withoutImageData(in)})
	if err := o.j.fencedErr(); err != nil {
		// Another process owns the session now: nothing this one does
		// could be stored, and it must not act on the project either.
		var taken *TakenOverError
		if errors.As(err, &taken) {
			err = taken
		}
		o.finishTurn(c, messages.TurnFailed, fmt.Sprintf("not started: %v", err))
		return
	}
	if err := o.j.brokenErr(); err != nil {
		// The session is stopped while its store refuses writes: a turn
		// run now could not be saved either. The journal keeps retrying
		// and the next input runs once it succeeds.
		o.finishTurn(c, messages.TurnFailed, fmt.Sprintf("not started: the session is stopped because its history cannot be saved (%v); free space or fix the database (odin doctor), then send it again", err))
		return
	}

	m, err := o.deps.Models.Model("main")
	if err != nil {
		o.finishTurn(c, messages.TurnFailed, err.Error())
		return
	}
	t.model = m
	if len(in.Images) > 0 && m.NoImages {
		o.finishTurn(c, messages.TurnFailed, fmt.Sprintf("the model %s does not take images, so the %s attached were not sent: switch to a model that does (/model, --model), or set model_info.%s.images: true if it does", m.ID, plural(len(in.Images), "image"), m.ID))
		return
	}
	if in.Mode == messages.ModeEdit && o.deps.Changes != nil {
		t.tracker = o.deps.Changes.Begin(t.ctx, o.session, shorten(in.Body, 80))
	}
	t.agents = map[string]*AgentDefinition{}
	var agentTools []tool.Tool
	if avail := AvailableAgents(o.deps.Tools, o.deps.Roster, in.Mode); len(avail) > 0 {
		for _, a := range avail {
			t.agents[a.Name] = a
		}
		agentTools = append(agentTools, o.agentToolFor(avail, in.Mode))
	}
	if in.Mode == messages.ModeEdit {
		agentTools = append(agentTools, requestReviewTool())
	}
	// agent_output and agent_stop act on background runs only: they are
	// offered once the session has one (offerRunTools), last, so that a
	// turn that adds them keeps the order the next turns have.
	if o.runs.anyBackground() {
		agentTools = append(agentTools, agentOutputTool(), agentStopTool())
	}
	t.tools = FilterTools(o.deps.allTools(), nil, in.Mode, false).With(agentTools...)
	if load, ok := loadToolsTool(t.tools, orchestratorOnDemand); ok {
		agentTools = append(agentTools, load)
		t.tools = t.tools.With(load)
	}
	t.extra = agentTools
	if in.Agent != "" {
		o.directTask(c, t)
		return
	}
	if in.Resumed {
		// A turn a crash cut off: its user message and whatever
		// followed are in the history already (a partial reply, marked
		// interrupted, is not); the model goes on from there.
		o.deps.Bus.Publish(messages.Notice{Level: "info", Text: "resuming an interrupted turn: " + firstLine(shorten(in.Body, 80))})
		o.callModel(c)
		return
	}
	o.hooks.run(c, t.ctx, policy.HookInput{Event: policy.UserPromptSubmit, Agent: "orchestrator", Prompt: in.Body},
		func(c actor.Context, hr policy.HookResult) {
			if o.live(t.id) != t {
				return
			}
			if hr.Blocked {
				o.finishTurn(c, messages.TurnFailed, "blocked by a UserPromptSubmit hook: "+strings.TrimSpace(hr.Feedback))
				return
			}
			o.firstTurnMap(c, t, func(c actor.Context, repoMap string) {
				user := llm.Message{Role: llm.RoleUser, Content: o.takeInbox(withRepoMap(withContext(in.Body, hr.Context), repoMap)), Typed: in.Body, Images: llmImages(in.Images)}
				o.history = append(o.history, user)
				o.j.appendInput(o.session, in.ID, user, t.started)
				if !o.titled {
					o.titled = true
					o.j.setTitle(o.session, firstLine(shorten(in.Body, 80)))
				}
				o.callModel(c)
			})
		})
}

func (o *Orchestrator) systemPrompt(t *turnState) (string, error) {
	// Everything else it says (root, OS, instructions, the roster and
	// the tools that make an agent read-only) is fixed for the session,
	// so it is rendered again only for a new mode or day: rendering it
	// was 6% of odin serve's CPU per turn.
	mode, date := string(t.input.Mode), o.deps.now().Format("2006-01-02")
	if o.system.text != "" && o.system.mode == mode && o.system.date == date {
		return o.system.text, nil
	}
	var agents []prompts.Agent
	for _, a := range AvailableAgents(o.deps.Tools, o.deps.Roster, t.input.Mode) {
		// Say "read-only" unless the description already does.
		ro := ReadOnlyAgent(o.deps.Tools, a) && !strings.Contains(strings.ToLower(a.Description), "read-only")
		agents = append(agents, prompts.Agent{Name: a.Name, ReadOnly: ro})
	}
	text, err := prompts.Render(prompts.Orchestrator, prompts.Data{Root: o.deps.Root, Date: date,
		OS: o.deps.osName(), Mode: mode, Instructions: o.deps.Instructions, Agents: agents})
	if err == nil && o.deps.AppendSystem != "" {
		// --append-system-prompt stays in the system message, after the
		// shared preamble: the Orchestrator's then no longer matches the
		// specialists', which the user's text is not for.
		pre, role := prompts.SplitRole(text)
		text = pre + "\n" + strings.TrimSpace(o.deps.AppendSystem) + "\n" + role
	}
	if err == nil {
		o.system.mode, o.system.date, o.system.text = mode, date, text
	}
	return text, err
}

// orchestratorMessages lays out a request of the Orchestrator as a
// specialist's is laid out: the preamble every agent of the session shares
// is the system message, and the Orchestrator's role follows the tools, at
// the head of the first user message (conversationHeading between the two;
// one message, not two in a row, which some chat templates refuse). A
// provider's prefix cache then serves the system message and the tools
// the Orchestrator shares with the specialists (the leading ones of every
// list) to the first request of each specialist, from the Orchestrator's
// first request on. The role is composed for each request, never stored;
// as Odin's addition around the stored message (Typed), the ledger counts
// it as context.
func orchestratorMessages(system string, history []llm.Message) []llm.Message {
	preamble, role := prompts.SplitRole(system)
	msgs := make([]llm.Message, 0, len(history)+2)
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: preamble})
	switch {
	case role == "":
	case len(history) > 0 && history[0].Role == llm.RoleUser:
		first := history[0]
		if first.Typed == "" {
			first.Typed = first.Content
		}
		first.Content = role + conversationHeading + first.Content
		msgs = append(msgs, first)
		history = history[1:]
	default:
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: role})
	}
	return append(msgs, history...)
}

// conversationHeading parts the Orchestrator's role from the conversation
// in its first user message.
const conversationHeading = "\n# Conversation\n"

func (o *Orchestrator) callModel(c actor.Context) {
	t := o.turn
	maxTurns := o.deps.Config.MaxTurns
	if maxTurns > 0 && t.modelTurns >= maxTurns {
		o.finishTurn(c, messages.TurnFailed, fmt.Sprintf("reached the turn limit (%d model calls) without a final answer; raise it with --max-turns or max_turns", maxTurns))
		return
	}
	if o.turnOverBudget(c) {
		return
	}
	system, err := o.systemPrompt(t)
	if err != nil {
		o.finishTurn(c, messages.TurnFailed, err.Error())
		return
	}
	if o.deps.MCP != nil {
		// An MCP server's tools/list_changed reaches the next request,
		// not only the next turn.
		t.tools = FilterTools(o.deps.allTools(), nil, t.input.Mode, false).With(t.extra...)
	}
	defs := offeredDefs(t.tools, orchestratorOnDemand, o.history)
	if !t.compacted && o.overThreshold(t, system, defs) {
		t.compacted = true
		o.startCompaction(c, t.ctx, "auto", nil, func(c actor.Context, res *CompactResult) {
			if o.live(t.id) == t {
				o.callAfterCompaction(c, t, res, system, defs)
			}
		})
		return
	}
	t.compacted = false
	t.modelTurns++
	msgs := orchestratorMessages(system, o.history)
	req := llm.Request{Model: t.model.ID, Messages: msgs, Tools: defs, MaxTokens: t.model.MaxOutput, Agent: "orchestrator", TextOnly: t.model.NoImages,
		MaxToolArguments: o.deps.Config.Context.MaxToolArgument}
	o.lastLen = len(o.history)
	id, m, bus := t.id, t.model, o.deps.Bus
	reply := o.j.startReply(o.session, m.ID, o.deps.now())
	t.reply = reply
	// The reply's calls may be answered while it streams (earlycall.go).
	t.results = map[string]toolResult{}
	tap := o.streamTap(c, t, reply)
	runAsync(c, t.ctx, func(ctx context.Context) any {
		resp, err := streamModel(ctx, m, req, bus, messages.Origin{Agent: "orchestrator"}, tap)
		return &modelDone{turn: id, resp: resp, err: err}
	})
}

func (o *Orchestrator) onModelDone(c actor.Context, msg *modelDone) {
	stackgrow.To16K() // hooks, gates and the journal follow
	t := o.live(msg.turn)
	if t == nil {
		return
	}
	if msg.err != nil {
		if t.ctx.Err() != nil {
			return // cancelled: cancelTurn already finished the turn
		}
		o.dropEarly(c, t, nil, "stopped: the Orchestrator's model call failed")
		o.cutReply(t, finishError)
		var le *llm.Error
		if errors.As(msg.err, &le) && le.Kind == llm.KindContextLength {
			if !t.overflowed {
				// The provider counts differently from our estimate:
				// compact once and try again.
				t.overflowed = true
				t.modelTurns--
				before := len(o.history)
				o.startCompaction(c, t.ctx, "auto", nil, func(c actor.Context, res *CompactResult) {
					if o.live(t.id) != t {
						return
					}
					if len(o.history) >= before {
						// Nothing was compacted (too short, blocked or
						// failed): the same request would fail the same way.
						o.finishTurn(c, messages.TurnFailed, overflowProblem(le, res))
						return
					}
					t.compacted = true
					o.callModel(c)
				})
				return
			}
			o.finishTurn(c, messages.TurnFailed, "the conversation no longer fits the model's context window even after compaction: "+le.Message+" (start a new session)")
			return
		}
		o.finishTurn(c, messages.TurnFailed, msg.err.Error())
		return
	}
	r := msg.resp
	if r.UsageReported {
		o.lastPrompt = r.Usage.PromptTokens
	} else {
		o.lastPrompt = 0
	}
	u := t.model.UsageOf(r)
	o.addUsage("orchestrator", t.model.ID, u)
	o.deps.Bus.Publish(messages.UsageUpdated{Origin: messages.Origin{Agent: "orchestrator"}, Model: t.model.ID, Usage: u})
	o.j.usage(o.session, "orchestrator", t.model.ID, u, o.deps.now())
	am := assistantMessage(r)
	o.history = append(o.history, am)
	// A reply without calls is the input's final one: stored with the
	// input's done mark (a restart must not run a finished turn again).
	final := ""
	if len(r.ToolCalls) == 0 {
		final = t.input.ID
	}
	t.reply.finish(am, r.FinishReason, o.deps.now(), final)
	t.reply = nil
	claimed := o.claimEarly(c, t, r.ToolCalls)
	if len(r.ToolCalls) == 0 {
		if p := finishProblem(r); p != "" {
			o.finishTurn(c, messages.TurnFailed, p)
			return
		}
		if o.holdForBackground(c, t) || o.refuseDone(c, t) {
			return
		}
		if t.stopBlocks >= maxHookBlocks {
			o.afterAnswer(c, r.Text)
			return
		}
		o.hooks.run(c, t.ctx, policy.HookInput{Event: policy.Stop, Agent: "orchestrator", Summary: r.Text}, func(c actor.Context, hr policy.HookResult) {
			if o.live(t.id) != t {
				return
			}
			if hr.Blocked {
				t.stopBlocks++
				next := llm.Message{Role: llm.RoleUser, Content: "A Stop hook asks you to continue:\n" + strings.TrimSpace(hr.Feedback)}
				o.history = append(o.history, next)
				o.j.appendMessage(o.session, next, "", "", o.deps.now())
				o.callModel(c)
				return
			}
			o.afterAnswer(c, r.Text)
		})
		return
	}
	t.calls = r.ToolCalls
	t.callIDs = distinctIDs(r.ToolCalls)
	var plain, keptPlain []llm.ToolCall
	for i, call := range r.ToolCalls {
		kept := am.ToolCalls[i]
		if t.recordAt == nil {
			t.recordAt = map[string][]int{}
		}
		t.recordAt[call.ID] = append(t.recordAt[call.ID], len(t.records))
		t.records = append(t.records, messages.ToolCallRecord{Agent: "orchestrator", ID: call.ID, Name: call.Name, Input: kept.Arguments})
		if res, ok := t.marks[call.ID]; ok {
			delete(t.marks, call.ID)
			o.markRecord(call.ID, res)
		}
		_, reviewOffered := t.tools.Get(reviewToolName)
		switch {
		case claimed != nil && claimed[i]:
			// Started while the reply streamed (earlycall.go).
		case call.Name == reviewToolName && reviewOffered:
			var in requestReviewInput
			_ = json.Unmarshal([]byte(call.Arguments), &in)
			t.review = strings.TrimSpace(in.Reason)
			if t.review == "" {
				t.review = "no reason given"
			}
			t.results[call.ID] = toolMessage(call, "Review and QA will run on this turn's changes when you finish.", false)
		case call.Name == AgentToolName && len(t.agents) > 0:
			o.delegate(c, call)
		case call.Name == AgentOutputToolName && len(t.agents) > 0:
			o.agentOutput(c, call)
		case call.Name == AgentStopToolName && len(t.agents) > 0:
			o.agentStop(c, call)
		default:
			plain, keptPlain = append(plain, call), append(keptPlain, kept)
		}
	}
	if len(plain) > 0 {
		env := o.env(t)
		set, bus, id, log := t.tools, o.deps.Bus, t.id, o.deps.Log
		runAsync(c, t.ctx, func(ctx context.Context) any {
			return &toolsDone{turn: id, outcomes: runCalls(ctx, log, set, env, plain, keptPlain, bus, messages.Origin{Agent: "orchestrator"})}
		})
	}
	o.maybeContinue(c)
}

func (o *Orchestrator) env(t *turnState) *tool.Env {
	var before func(string) error
	if t.tracker != nil {
		before = t.tracker.BeforeWrite
	}
	var intend func(string, []byte) error
	if iw, ok := t.tracker.(interface{ IntendWrite(string, []byte) error }); ok {
		intend = iw.IntendWrite
	}
	env := &tool.Env{Root: o.deps.Root, Agent: "orchestrator", AgentID: o.session, SessionID: o.session,
		Mode: string(t.input.Mode), Reads: o.reads, Guard: o.deps.Guard("orchestrator", ""), DenyRead: o.deps.DenyRead, BeforeWrite: before, IntendWrite: intend,
		BeforeCommand: beforeCommand(t.tracker), Editor: o.deps.Editor, Locks: o.deps.Locks, Publish: func(ev any) {
			if e, ok := ev.(messages.Event); ok {
				o.deps.Bus.Publish(e)
			}
		}}
	// A nil *meteredSmall must not become a non-nil interface.
	if o.small != nil {
		env.Small = o.small
	}
	return env
}

func (o *Orchestrator) onToolsDone(c actor.Context, msg *toolsDone) {
	t := o.live(msg.turn)
	if t == nil {
		return
	}
	for model, u := range o.small.take() {
		o.addUsage("orchestrator", model, u)
		o.deps.Bus.Publish(messages.UsageUpdated{Origin: messages.Origin{Agent: "orchestrator"}, Model: model, Usage: u})
		o.j.usage(o.session, "orchestrator", model, u, o.deps.now())
	}
	for _, out := range msg.outcomes {
		res := out.result
		if out.err != nil {
			o.deps.Log.Error().Err(out.err).Str("tool", out.call.Name).Msg("orchestrator: tool failed")
			res = tool.Result{Output: "internal error while running " + out.call.Name + ": " + firstLine(out.err.Error()), IsError: true}
		}
		if todos, ok := res.Meta.([]messages.Todo); ok {
			o.todos = todos
			t.planned = true
			o.deps.Bus.Publish(messages.TodosUpdated{Todos: todos})
			o.j.todos(o.session, todos)
		}
		o.j.tool(o.session, "orchestrator", out, res.Files, o.deps.now())
		t.files = addUnique(t.files, res.Files...)
		o.markRecord(out.call.ID, res)
		t.results[out.call.ID] = withImages(toolMessage(out.call, res.Output, res.IsError), res.Images)
	}
	o.maybeContinue(c)
}

func (o *Orchestrator) markRecord(callID string, res tool.Result) {
	t := o.turn
	at, ok := t.recordAt[callID]
	if !ok {
		// A call started while its reply streamed reported before the
		// reply ended: its record follows with the reply.
		if t.marks == nil {
			t.marks = map[string]tool.Result{}
		}
		t.marks[callID] = res
		return
	}
	// By index: a fan-out's reports would otherwise scan every record each.
	for _, i := range at {
		t.records[i].IsError, t.records[i].Denied = res.IsError, res.Denied
		t.records[i].Files = relPaths(o.deps.Root, res.Files)
	}
}

// maybeContinue calls the model again once every call of the last response
// has its result.
func (o *Orchestrator) maybeContinue(c actor.Context) {
	t := o.turn
	// No calls pending: the model was called already (a result that came
	// in synchronously, such as a background start, must not call it
	// twice).
	if t == nil || t.finished || t.gates != nil || len(t.calls) == 0 {
		return
	}
	// Fewer results than calls: one is missing, without looking at each
	// (a fan-out's reports would otherwise cost n² lookups).
	if len(t.results) < t.callIDs {
		return
	}
	for _, call := range t.calls {
		if _, ok := t.results[call.ID]; !ok {
			return
		}
	}
	for _, call := range t.calls {
		o.addResult(t.results[call.ID])
	}
	t.calls = nil
	o.callModel(c)
}

// distinctIDs counts the different IDs of calls.
func distinctIDs(calls []llm.ToolCall) int {
	seen := make(map[string]struct{}, len(calls))
	for _, c := range calls {
		seen[c.ID] = struct{}{}
	}
	return len(seen)
}

// directTask runs one specialist for a command (/init) without the
// Orchestrator's model; the conversation history is not touched.
func (o *Orchestrator) directTask(c actor.Context, t *turnState) {
	def, ok := o.deps.Roster.Get(t.input.Agent)
	if !ok {
		o.finishTurn(c, messages.TurnFailed, fmt.Sprintf("no agent %q in the roster", t.input.Agent))
		return
	}
	o.spawnTask(c, def, "/"+def.Name, t.input.Body, def.Timeout, "", func(c actor.Context, r *messages.Report) {
		t.direct = r
		t.answer = r.Summary
		status := messages.TurnDone
		if r.Status != messages.ReportOK {
			status = messages.TurnFailed
		}
		o.finishTurn(c, status, r.Error)
	})
}

// spawnTask starts a specialist for a task of the Orchestrator itself (a
// gate, a direct command), in the foreground of the turn.
func (o *Orchestrator) spawnTask(c actor.Context, def *AgentDefinition, desc, brief string, timeout time.Duration, callID string, onReport func(actor.Context, *messages.Report), opts ...func(*messages.Delegate)) *taskRun {
	d := &messages.Delegate{TaskID: o.deps.NewID(), Agent: def.Name, Description: desc, Brief: brief,
		Mode: o.turn.input.Mode, Timeout: timeout, SessionID: o.session, ParentCallID: callID}
	for _, opt := range opts {
		opt(d)
	}
	return o.spawnRun(c, def, d, false, onReport)
}

func (o *Orchestrator) taskByPID(pid *actor.PID) *taskRun {
	if r := o.byPID[pid.Id]; r != nil && r.pid.Equal(pid) {
		return r
	}
	return nil
}

// dropTask removes a run from the registry of running tasks.
func (o *Orchestrator) dropTask(run *taskRun) {
	delete(o.tasks, run.delegate.TaskID)
	if run.pid != nil && o.byPID[run.pid.Id] == run {
		delete(o.byPID, run.pid.Id)
	}
}

// onReport takes a specialist's report; a run no longer in tasks (its
// turn was cancelled, or it was stopped) is not heard.
func (o *Orchestrator) onReport(c actor.Context, r *messages.Report) {
	run := o.tasks[r.TaskID]
	if run == nil || run.reported || c.Sender() != nil && !c.Sender().Equal(run.pid) {
		return
	}
	if r.Patch != nil {
		o.applyPatch(c, run, r)
		return
	}
	o.complete(c, run, r)
}

// complete records a task's report (real or synthesized) and hands it on.
func (o *Orchestrator) complete(c actor.Context, run *taskRun, r *messages.Report) {
	run.reported = true
	if run.timer != nil {
		run.timer.Stop()
	}
	c.Stop(run.pid)
	r = withRunFacts(r, run.crashes, run.delegate.TaskID)
	status := messages.AgentRunStatus(r.Status)
	if r.Error == "stopped by the Orchestrator" {
		status = messages.RunStopped
	}
	o.settleRun(run, r)
	o.finishRun(run.delegate.TaskID, status, r)
	o.dropTask(run)
	// A detached run's turn is over: its files and spend are not this
	// turn's (its spend is in the store all the same).
	if t := o.live(run.turn); t != nil && !run.detached {
		t.files = addUnique(t.files, r.Files...)
		o.addUsage(r.Agent, r.Model, r.Usage)
	}
	o.deps.Bus.Publish(messages.AgentFinished{Report: *r})
	run.onReport(c, r)
}

// withRunFacts returns the report completed with what only the parent
// knows: the restarts it counted and the run's session ID. The received
// report is left as it was sent: a message is never mutated after
// sending, and its sender (or anyone it was shown to) may still read it.
func withRunFacts(r *messages.Report, crashes int, taskID string) *messages.Report {
	cp := *r
	if cp.Restarts == 0 {
		cp.Restarts = crashes
	}
	if cp.SessionID == "" {
		cp.SessionID = taskID
	}
	return &cp
}

func (o *Orchestrator) onCrash(msg *specialistCrashed) {
	run := o.tasks[msg.taskID]
	if run == nil {
		return
	}
	run.crash, run.crashes = msg.reason, msg.restart+1
	if run.crashes <= o.deps.Config.Supervision.MaxRestarts {
		o.deps.Bus.Publish(messages.AgentRestarted{TaskID: msg.taskID, Agent: run.def.Name, Restart: run.crashes, Reason: msg.reason})
	}
}

func (o *Orchestrator) onTerminated(c actor.Context, msg *actor.Terminated) {
	run := o.taskByPID(msg.Who)
	if run == nil || run.reported {
		return
	}
	reason := run.crash
	if reason == "" {
		reason = "stopped without reporting"
	}
	o.complete(c, run, &messages.Report{TaskID: run.delegate.TaskID, Agent: run.def.Name, Status: messages.ReportFailed,
		Summary:  fmt.Sprintf("the %s specialist failed: %s", run.def.Name, reason),
		Error:    fmt.Sprintf("crashed %s, restart limit %d reached: %s", plural(run.crashes, "time"), o.deps.Config.Supervision.MaxRestarts, reason),
		Restarts: max(run.crashes-1, 0)})
}

// onReportPending notes that a run's model has reported: its deadline
// no longer applies to the checks that follow.
func (o *Orchestrator) onReportPending(msg *reportPending) {
	if run := o.tasks[msg.taskID]; run != nil && !run.reported {
		run.checking = true
	}
}

func (o *Orchestrator) onTaskExpired(c actor.Context, msg *taskExpired) {
	run := o.tasks[msg.taskID]
	if run == nil || run.reported {
		return
	}
	if run.checking && !run.checksExtended {
		// The report is in and the checks after it are still running
		// (a cold build cache on a loaded machine): they get one more
		// deadline of their own rather than turning the report into a
		// timeout. The checks bound each command themselves.
		run.checksExtended = true
		system, self, turn, id := c.ActorSystem(), c.Self(), msg.turn, msg.taskID
		run.timer = time.AfterFunc(run.delegate.Timeout+taskGrace, func() {
			system.Root.Send(self, &taskExpired{turn: turn, taskID: id})
		})
		return
	}
	c.Stop(run.pid)
	o.complete(c, run, &messages.Report{TaskID: run.delegate.TaskID, Agent: run.def.Name, Status: messages.ReportTimeout,
		Summary: fmt.Sprintf("the %s specialist did not finish within %s and was stopped", run.def.Name, run.delegate.Timeout),
		Error:   "deadline exceeded", Restarts: run.crashes})
}

// overThreshold reports whether the next request would pass
// context.compact_at of the model's window.
func (o *Orchestrator) overThreshold(t *turnState, system string, defs []llm.ToolDef) bool {
	at := o.deps.Config.Context.CompactAt
	window := t.model.ContextWindow
	if at <= 0 || window <= 0 {
		return false
	}
	size := o.estimate(llm.EstimateTokens(system) + llm.EstimateTools(defs))
	if o.lastPrompt == 0 {
		size = llm.EstimateMessages(o.history) + llm.EstimateTokens(system) + llm.EstimateTools(defs)
	}
	return float64(size) > at*float64(window)
}

// addResult appends a tool result to the history and the store.
func (o *Orchestrator) addResult(r toolResult) {
	o.history = append(o.history, r.msg)
	o.j.appendResult(o.session, r, o.deps.now())
}

// abandonTurnRuns stops the runs turn t started that are still running,
// except detached ones, which outlive it.
func (o *Orchestrator) abandonTurnRuns(c actor.Context, t *turnState, why string) {
	for _, run := range o.tasks {
		if run.turn == t.id && !run.detached && !run.reported {
			// Its spend since its last report is lost with it.
			t.usage.CostUnknown = true
			o.abandon(c, run, why)
		}
	}
}

// reportForModel is the agent tool's result text: the report through the
// output filter (the structured result whole, the notes capped).
// handle is the run's short name in the registry (search-1), which the
// model passes to agent_output, agent_stop and resume.
func reportForModel(r *messages.Report, handle string) string {
	r = outputFilter(r)
	if handle == "" {
		handle = r.TaskID
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s specialist finished: status %s (run %s, %d model calls, %d tokens).\n", r.Agent, r.Status, handle, r.Turns, r.Usage.TotalTokens)
	if r.Error != "" && r.Error != r.Summary {
		fmt.Fprintf(&b, "Problem: %s\n", r.Error)
	}
	result, summarised, diffs := resultForModel(r.Result, r.Summary)
	if !summarised {
		fmt.Fprintf(&b, "Summary: %s\n", r.Summary)
	}
	if len(result) > 0 {
		fmt.Fprintf(&b, "Result:\n%s\n", result)
	}
	if diffs {
		b.WriteString("(The files' diffs are left out: GitDiff shows them.)\n")
	}
	return b.String()
}

// resultForModel is a report's structured result as the parent's model
// reads it: the diffs Odin attached to a writer's files_modified and
// files_created (whole new files, every line of them) become a pointer to
// GitDiff, which shows them on demand, instead of riding in the parent's
// history on every later request (issue 37); paths and line counts stay.
// summarised reports that the result carries summary itself, so the
// Summary line would repeat it; diffs that diffs were left out. A result
// that is not a JSON object is returned as it is.
func resultForModel(raw json.RawMessage, summary string) (_ json.RawMessage, summarised, diffs bool) {
	// Decoded by the v2 engine with encoding/json's semantics: every
	// report of a fan-out passes here, in the Orchestrator's mailbox.
	var obj map[string]json.RawMessage
	if len(raw) == 0 || jsonv1.Unmarshal(raw, &obj) != nil {
		return raw, false, false
	}
	var own string
	summarised = jsonv1.Unmarshal(obj["summary"], &own) == nil && own == summary
	for _, key := range []string{"files_modified", "files_created"} {
		var files []map[string]json.RawMessage
		if jsonv1.Unmarshal(obj[key], &files) != nil {
			continue
		}
		for _, f := range files {
			if _, ok := f["diff"]; ok {
				delete(f, "diff")
				diffs = true
			}
		}
		if diffs {
			obj[key], _ = json.Marshal(files)
		}
	}
	// A clean lint pass is its verdict: the commands that ran and their
	// zero exit codes tell the parent nothing more. A pass with findings
	// keeps them.
	var lint messages.LintReport
	lintShort := false
	if l, ok := obj["lint"]; ok && json.Unmarshal(l, &lint) == nil && lint.Clean && len(lint.Runs) > 0 {
		short := map[string]any{"clean": true, "passes": lint.Passes}
		if lint.Note != "" {
			short["note"] = lint.Note
		}
		obj["lint"], _ = json.Marshal(short)
		lintShort = true
	}
	if !diffs && !lintShort {
		return raw, summarised, false
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return raw, summarised, false
	}
	return out, summarised, diffs
}

func (o *Orchestrator) addUsage(agent, model string, u messages.Usage) {
	t := o.turn
	t.usage = t.usage.Add(u)
	o.settle(t.id, messages.Spend{Tokens: u.TotalTokens, USD: u.Cost})
	for i := range t.byAgent {
		if t.byAgent[i].Agent == agent && t.byAgent[i].Model == model {
			t.byAgent[i].Usage = t.byAgent[i].Usage.Add(u)
			return
		}
	}
	t.byAgent = append(t.byAgent, messages.AgentUsage{Agent: agent, Model: model, Usage: u})
}

// afterAnswer runs when the model gives its final answer: plan files, then
// the quality gates for any change, then the end of the turn.
func (o *Orchestrator) afterAnswer(c actor.Context, text string) {
	t := o.turn
	t.answer = text
	if t.input.Mode == messages.ModePlan {
		root, body, now := o.deps.Root, t.input.Body, o.deps.now()
		type written struct {
			path string
			err  error
		}
		offMailbox(c, t.ctx, t.id, o.disk, func(context.Context) written {
			path, err := writePlan(root, body, text, now)
			return written{path, err}
		}, func(c actor.Context, w written) {
			if w.err != nil {
				o.finishTurn(c, messages.TurnFailed, "could not save the plan: "+w.err.Error())
				return
			}
			t.planFile = relPath(o.deps.Root, w.path)
			o.runGates(c)
		})
		return
	}
	o.runGates(c)
}

// runGates starts the quality gates when the turn changed files in edit
// mode, and otherwise ends the turn with the model's answer.
func (o *Orchestrator) runGates(c actor.Context) {
	t := o.turn
	files := t.files
	if t.tracker != nil {
		files = addUnique(files, t.tracker.Changed()...)
	}
	t.files = files
	if t.input.Mode == messages.ModeEdit && len(files) > 0 {
		t.gates = newGateRun(o, t)
		o.behavior.BecomeStacked(o.gating)
		t.gates.start(c)
		return
	}
	o.finishTurn(c, messages.TurnDone, "")
}

// cutReply keeps the part of a reply that streamed before it was cut short
// (why: cancelled or error), in the store and in the live history alike,
// with cancelled results for the calls it announced.
func (o *Orchestrator) cutReply(t *turnState, why llm.FinishReason) {
	if t.reply != nil && why == finishCancelled {
		// The provider charges for a request cancelled mid-call, but
		// its usage never arrives: the turn's cost is not known in full
		// (shown so, never as the priced part alone). A request that
		// failed was, as a rule, not charged.
		t.usage.CostUnknown = true
	}
	if am, results, ok := t.reply.cut(why, o.deps.now()); ok {
		o.history = append(o.history, am)
		for _, r := range results {
			o.addResult(r)
		}
	}
	t.reply = nil
}

// cancelTurn ends the running turn at once: in-flight work is cancelled,
// specialists are stopped, and every unanswered tool call gets a cancelled
// result so the history stays valid.
func (o *Orchestrator) cancelTurn(c actor.Context, reason string) {
	t := o.turn
	if t == nil || t.finished {
		return
	}
	o.abandonTurnRuns(c, t, "cancelled with its turn")
	// A reply cut off mid-stream is kept as far as it came, with a
	// cancelled finish and cancelled results for the calls it announced.
	o.cutReply(t, finishCancelled)
	if t.gates == nil {
		for _, call := range t.calls {
			if _, ok := t.results[call.ID]; !ok {
				t.results[call.ID] = cancelledMessage(call)
			}
		}
		for _, call := range t.calls {
			o.addResult(t.results[call.ID])
		}
		t.calls = nil
	}
	if reason == "" {
		reason = "cancelled by the user"
	}
	o.finishTurn(c, messages.TurnCancelled, reason)
}

// sessionFenced: the session's store claim was superseded (the journal's
// onFenced); reason says so.
type sessionFenced struct{ reason string }

// onFenced stops what the session runs once another process took it over,
// since none of its work could be stored any more: every agent run,
// detached ones too, and the running turn or compaction, cancelled with
// reason as Cancel would (sent to self, so that each behaviour handles it
// as its own). Later inputs are refused by startTurn.
func (o *Orchestrator) onFenced(c actor.Context, msg *sessionFenced) {
	for _, run := range o.tasks {
		if !run.reported {
			o.abandon(c, run, msg.reason)
		}
	}
	c.Send(c.Self(), &messages.Cancel{Reason: msg.reason})
}

// turnSaved carries a finished turn back after its history was committed
// (or could not be), its diff rendered and its checkpoint committed, all
// off the mailbox.
type turnSaved struct {
	turn int
	res  messages.TurnResult
	err  error // the checkpoint's
	// unsaved is why the turn's history is not in the store (the
	// journal's barrier answered ErrNotSaved), nil when it is.
	unsaved error
}

// finishTurn ends the turn: its result is assembled now; TurnFinished is
// published (onTurnSaved) only once the turn's history — its input, every
// reply and tool result — is committed: what a client is told is done
// survives a kill -9 from then on. The wait for the commit (a journal
// barrier), the diff and the undo checkpoint run off the mailbox; until
// they are done the Orchestrator stays busy, so inputs that arrive queue
// behind the turn as before.
func (o *Orchestrator) finishTurn(c actor.Context, status messages.TurnStatus, problem string) {
	t := o.turn
	if t == nil || t.finished {
		return
	}
	t.finished = true
	t.cancel()
	status, problem = doneStatus(t, status, problem)
	o.rememberFrontier(t)
	o.abandonTurnRuns(c, t, "stopped: its turn ended")
	for _, run := range o.tasks {
		if run.turn == t.id && run.detached {
			o.deps.Bus.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("agent run %s (%s) is detached: it keeps working after this turn, and its report comes with your next message", o.handle(run.delegate.TaskID), run.def.Name)})
		}
	}
	for _, w := range t.waiters {
		w.timer.Stop()
	}
	if o.host != nil && t.tracker != nil {
		o.host.changeSets.drop(fmt.Sprintf("%s/%d", o.session, t.id))
	}
	res := messages.TurnResult{Input: t.input, Status: status, Answer: t.answer, Interim: t.interim, Error: problem,
		ToolCalls: t.records, Usage: t.usage, ByAgent: t.byAgent, PlanFile: t.planFile, Report: t.direct,
		Elapsed: o.deps.now().Sub(t.started)}
	if b := o.runs.book; b.turnID == t.id {
		res.Budget = b.exceeded
	}
	if res.ToolCalls == nil {
		res.ToolCalls = []messages.ToolCallRecord{}
	}
	if t.gates != nil {
		rep := t.gates.report
		res.Gates = &rep
	}
	res.Files = relPaths(o.deps.Root, t.files)
	if !(status == messages.TurnCancelled && problem == closeReason) {
		// Over, whatever the outcome (the final reply, if any, marked it
		// already). A turn cut off by the session's close is not: the
		// next open resumes it.
		o.j.inputDone(o.session, t.input.ID)
	}
	// Taken here, in the mailbox, so that it follows every write this
	// turn queued.
	saved := o.j.barrier()
	if t.tracker == nil {
		select {
		case err := <-saved:
			// Already committed (or no store): no round trip.
			o.onTurnSaved(c, &turnSaved{turn: t.id, res: res, unsaved: err})
			return
		default:
		}
	}
	tracker, changes, files, id, disk := t.tracker, o.deps.Changes, append([]string(nil), t.files...), t.id, o.disk
	ctx := context.WithoutCancel(t.ctx)
	if disk != nil {
		disk.Add(1)
	}
	runAsync(c, ctx, func(ctx context.Context) any {
		if disk != nil {
			defer disk.Done()
		}
		var err error
		if tracker != nil {
			res.Diff = tracker.Diff(files)
			if changes != nil {
				err = changes.Commit(ctx, tracker)
			}
		}
		// The journal always answers: on commit, or with ErrNotSaved
		// once writes have failed for longer than its patience or the
		// session closes.
		return &turnSaved{turn: id, res: res, err: err, unsaved: <-saved}
	})
}

// onTurnSaved publishes the finished turn and takes the next input. A turn
// whose history could not be saved says so in its result and in an error
// notice: its answer was given, but a restart will not see it.
func (o *Orchestrator) onTurnSaved(c actor.Context, msg *turnSaved) {
	t := o.turn
	if t == nil || t.id != msg.turn {
		return
	}
	if msg.err != nil {
		o.deps.Bus.Publish(messages.Notice{Level: "warn", Text: "could not save the checkpoint for undo: " + msg.err.Error()})
	}
	var taken *TakenOverError
	if msg.unsaved != nil {
		msg.res.NotSaved = msg.unsaved.Error()
	}
	if msg.unsaved != nil && !errors.As(msg.unsaved, &taken) {
		// (A session taken over said so with SessionFenced; its store
		// is fine.)
		o.deps.Bus.Publish(messages.Notice{Level: "error", Text: fmt.Sprintf("this turn is not saved (%v): the session takes no new input until the store accepts writes again; free space or fix the database (odin doctor)", msg.unsaved)})
	}
	o.deps.Bus.Publish(messages.TurnFinished{Result: msg.res})
	o.turn = nil
	o.compacting = nil
	o.behavior.Become(o.idle)
	o.takeNext(c)
}

// takeNext starts the next queued input, if any, unless the session is
// closing: the queue then stays accepted in the input ledger and the next
// open runs it.
func (o *Orchestrator) takeNext(c actor.Context) {
	if len(o.queue) > 0 && !o.closing {
		next := o.queue[0]
		o.queue = o.queue[1:]
		o.startTurn(c, next)
	}
}

var slugUnsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]+`) })

// writePlan saves a plan-mode answer as .odin/plans/<slug>.md, atomically.
func writePlan(root, request, plan string, now time.Time) (string, error) {
	slug := strings.Trim(slugUnsafe().ReplaceAllString(strings.ToLower(request), "-"), "-")
	if len(slug) > 48 {
		slug = strings.TrimRight(slug[:48], "-")
	}
	if slug == "" {
		slug = "plan"
	}
	dir := filepath.Join(root, ".odin", "plans")
	// Confined beneath the root: a .odin or .odin/plans shipped as a
	// symlink must not carry the plan outside the project.
	if err := fsutil.MkdirAllIn(root, dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, slug+".md")
	if _, err := fsutil.LstatIn(root, path); err == nil {
		path = filepath.Join(dir, fmt.Sprintf("%s-%s.md", slug, now.Format("20060102-150405")))
	}
	body := fmt.Sprintf("# Plan: %s\n\n_Created by Odin on %s._\n\n%s\n", strings.TrimSpace(request), now.Format("2006-01-02 15:04"), strings.TrimSpace(plan))
	if err := fsutil.WriteFileIn(root, path, []byte(body), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

func relPath(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func relPaths(root string, ps []string) []string {
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = relPath(root, p)
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

const reviewToolName = "RequestReview"

type requestReviewInput struct {
	Reason string `json:"reason" jsonschema:"why it deserves review"`
}

// requestReviewTool lets the Orchestrator's model ask for review and QA of
// a change that the rules would not force. It can only add gates, never
// waive them.
var requestReviewTool = sync.OnceValue(func() tool.Tool {
	return tool.New[requestReviewInput](reviewToolName, tool.ClassSpawn,
		"Ask for review and QA of this turn's changes when the rules would not require them (a subtle change). Gates are only added, never skipped.",
		func(context.Context, *tool.Env, requestReviewInput) (tool.Result, error) {
			return tool.Result{Output: "review requested"}, nil
		})
})

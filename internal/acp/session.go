package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/messages"
)

// liveSession is an open session of the connection and the goroutine that
// turns its events into session/update notifications.
type liveSession struct {
	a *Agent
	s Session

	stop context.CancelFunc
	done chan struct{} // closed when the pump ends

	mu      sync.Mutex
	mode    messages.Mode
	waiting map[string]chan messages.TurnResult // by input ID
	// before holds the content of files an edit tool is about to change,
	// by call, for the diff shown when it finishes.
	before map[string]fileBefore
	// open are the tool calls announced and not yet finished, by ACP
	// tool call ID; closed are those a turn's end finished for the
	// client before the tool itself did, whose late ToolFinished is
	// dropped: the client was told the turn is over. Only the pump
	// touches them.
	open   map[string]openCall
	closed map[string]bool
	// cost is what the session has spent, in US dollars; titled is set
	// once its title was sent (it never changes after). Guarded by mu.
	cost   float64
	titled bool
	// cmds are the session's slash commands, read when it opened.
	cmds []Command
	// roots are the session's workspace, the cwd it was opened with as
	// given and resolved (the tools see the resolved one): titles show
	// the paths inside it relative to it, as the CLI does; locations stay
	// absolute, as ACP requires.
	roots []string
	// calls tells the session's editor fs and terminals which tool calls
	// the client has seen announced; cards are the terminals calls show.
	calls *announcer
	cards *terminalCards

	approvals sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// openCall is an announced call: who made it and the model's ID for it.
type openCall struct {
	origin messages.Origin
	id     string
}

type fileBefore struct {
	path string
	text *string // nil when the file did not exist
}

func newLiveSession(a *Agent, s Session, mode messages.Mode, calls *announcer) *liveSession {
	if calls == nil {
		calls = newAnnouncer()
	}
	return &liveSession{a: a, s: s, done: make(chan struct{}), mode: mode,
		waiting: map[string]chan messages.TurnResult{}, before: map[string]fileBefore{},
		open: map[string]openCall{}, closed: map[string]bool{}, calls: calls}
}

// add registers s and starts its event pump. The bus subscription is made
// before anything is submitted, so no event of a turn is missed. mode is
// the session's mode (the stored one for a loaded session); o holds the
// announcer its editor fs and terminals wait on.
func (a *Agent) add(s Session, mode messages.Mode, o OpenOptions, cwd string) *liveSession {
	ctx, stop := context.WithCancel(context.Background())
	ls := newLiveSession(a, s, mode, o.calls)
	ls.roots = workspaceRoots(cwd)
	ls.cards = o.cards
	ls.stop = stop
	ls.cmds = s.Commands()
	evs := s.Bus().Subscribe(ctx, 256, true)
	go ls.pump(ctx, evs)
	a.mu.Lock()
	a.sessions[s.ID()] = ls
	a.mu.Unlock()
	return ls
}

func (ls *liveSession) close() error {
	ls.closeOnce.Do(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ls.closeErr = ls.s.Close(cctx)
		ls.stop()
		<-ls.done
		ls.calls.close()
		ls.approvals.Wait()
	})
	return ls.closeErr
}

// withdrawQueued removes this connection's prompts still queued in the
// session and answers each as cancelled.
func (ls *liveSession) withdrawQueued(ctx context.Context) {
	ls.mu.Lock()
	mine := make([]string, 0, len(ls.waiting))
	for id := range ls.waiting {
		mine = append(mine, id)
	}
	ls.mu.Unlock()
	if len(mine) == 0 {
		return
	}
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	qs, err := ls.s.Queue(qctx)
	if err != nil {
		ls.a.opts.Log.Debug("acp: queue", "err", err)
		return
	}
	for _, in := range qs.Queued {
		if !slices.Contains(mine, in.ID) {
			continue
		}
		after, err := ls.s.Remove(qctx, in.ID)
		if err != nil {
			ls.a.opts.Log.Debug("acp: withdraw a queued prompt", "err", err)
			continue
		}
		if slices.ContainsFunc(after.Queued, func(q messages.UserMessage) bool { return q.ID == in.ID }) ||
			(after.Running != nil && after.Running.ID == in.ID) {
			continue // it started meanwhile: the cancel reaches it
		}
		ls.mu.Lock()
		ch := ls.waiting[in.ID]
		delete(ls.waiting, in.ID)
		ls.mu.Unlock()
		if ch != nil {
			ch <- messages.TurnResult{Input: in, Status: messages.TurnCancelled}
		}
	}
}

// modelState is the session's model and the ones it may switch to, nil
// when there is no choice to offer.
func (ls *liveSession) modelState() *sdk.SessionModelState {
	cur, available := ls.s.Models()
	if cur == "" || len(available) == 0 {
		return nil
	}
	st := &sdk.SessionModelState{CurrentModelId: sdk.ModelId(cur)}
	for _, m := range available {
		st.AvailableModels = append(st.AvailableModels, sdk.ModelInfo{ModelId: sdk.ModelId(m), Name: m})
	}
	return st
}

// The session config options Odin offers (ACP's session/set_config_option):
// the mode and the model, the same choices as session/set_mode and
// session/set_model, for clients that select through config options.
const (
	configMode  sdk.SessionConfigId = "mode"
	configModel sdk.SessionConfigId = "model"
)

// configOptions are the session's mode and (when there is a choice) its
// model as config options, with their current values.
func (ls *liveSession) configOptions() []sdk.SessionConfigOption {
	modes := ls.modeState()
	var modeOpts sdk.SessionConfigSelectOptionsUngrouped
	for _, m := range modes.AvailableModes {
		modeOpts = append(modeOpts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.Id), Name: m.Name, Description: m.Description})
	}
	out := []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
		Id: configMode, Name: "Mode", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryMode),
		CurrentValue: sdk.SessionConfigValueId(modes.CurrentModeId), Options: sdk.SessionConfigSelectOptions{Ungrouped: &modeOpts},
	}}}
	if models := ls.modelState(); models != nil {
		var modelOpts sdk.SessionConfigSelectOptionsUngrouped
		for _, m := range models.AvailableModels {
			modelOpts = append(modelOpts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.ModelId), Name: m.Name})
		}
		out = append(out, sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
			Id: configModel, Name: "Model", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryModel),
			CurrentValue: sdk.SessionConfigValueId(models.CurrentModelId), Options: sdk.SessionConfigSelectOptions{Ungrouped: &modelOpts},
		}})
	}
	return out
}

func (ls *liveSession) modeState() *sdk.SessionModeState {
	ls.mu.Lock()
	cur := ls.mode
	ls.mu.Unlock()
	desc := map[messages.Mode]string{
		messages.ModeAsk:  "Answers questions; reads, changes nothing",
		messages.ModePlan: "Writes a plan; changes nothing",
		messages.ModeEdit: "Changes files and runs commands, asking where policy says",
	}
	var modes []sdk.SessionMode
	for _, m := range []messages.Mode{messages.ModeAsk, messages.ModePlan, messages.ModeEdit} {
		modes = append(modes, sdk.SessionMode{Id: sdk.SessionModeId(m), Name: string(m), Description: sdk.Ptr(desc[m])})
	}
	return &sdk.SessionModeState{AvailableModes: modes, CurrentModeId: sdk.SessionModeId(cur)}
}

// pump forwards events until the subscription ends. A session/update is
// a notification, so sending one never waits for the editor. Everything
// a turn publishes reaches the client before the turn's session/prompt
// answers: the answer is released here, in event order, after the
// updates before it were written; and nothing of the next turn is sent
// before that answer is written (answer).
func (ls *liveSession) pump(ctx context.Context, evs <-chan messages.Envelope) {
	defer close(ls.done)
	for env := range evs {
		switch e := env.Event.(type) {
		case messages.TurnFinished:
			ls.send(ctx, ls.endCalls(e.Result.Status == messages.TurnCancelled))
			ls.send(ctx, ls.titleUpdate(ctx))
			ls.mu.Lock()
			ch := ls.waiting[e.Result.Input.ID]
			delete(ls.waiting, e.Result.Input.ID)
			ls.mu.Unlock()
			if ch != nil {
				ls.answer(ctx, ch, e.Result)
			}
			continue
		case messages.ApprovalRequested:
			// Asking waits for the user: never in the pump, whose
			// subscription Publish (and so Answer) waits for. The call it
			// names was announced by an earlier event, already sent.
			card := ls.cardOf(e)
			ls.approvals.Add(1)
			go func() {
				defer ls.approvals.Done()
				ls.askPermission(ctx, e, card)
			}()
			continue
		case messages.Resync:
			// Dropped events may have announced calls the editor fs
			// waits for: let it go on.
			ls.calls.resync()
		}
		ls.send(ctx, ls.updates(env.Event))
		switch e := env.Event.(type) {
		case messages.ToolStarted:
			ls.calls.markShown(callID(e.Origin, e.CallID))
		case messages.ToolFinished:
			ls.calls.drop(callID(e.Origin, e.CallID))
		}
	}
}

// responseWait bounds how long the pump holds a session's events back for
// a prompt response to be written: the handler only builds the response
// once it has the result, so only a broken connection takes this long.
const responseWait = 30 * time.Second

// answer hands a turn's result to its session/prompt handler and returns
// once the handler's response is on the wire. The SDK writes a response
// after its handler returns, while the next queued turn starts as soon as
// this one finished: without the wait, that turn's first updates could
// reach the client before this turn's response.
func (ls *liveSession) answer(ctx context.Context, ch chan<- messages.TurnResult, res messages.TurnResult) {
	marker := inputMarker(res.Input.ID)
	written := make(chan struct{})
	ls.a.out.after(marker, func() { close(written) })
	ch <- res
	t := time.NewTimer(responseWait)
	defer t.Stop()
	select {
	case <-written:
		return
	case <-ctx.Done():
	case <-ls.a.conn.Done():
	case <-t.C:
		ls.a.opts.Log.Warn("acp: a session/prompt response was not written in time; the next turn goes on", "input", res.Input.ID)
	}
	ls.a.out.forget(marker)
}

func (ls *liveSession) send(ctx context.Context, us []sdk.SessionUpdate) {
	id := sdk.SessionId(ls.s.ID())
	for _, u := range us {
		if err := ls.a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: id, Update: u}); err != nil {
			ls.a.opts.Log.Debug("acp: session/update", "err", err)
		}
	}
}

// titleUpdate tells the client the session's title once it has one: the
// first turn sets it, saved before that turn finishes.
func (ls *liveSession) titleUpdate(ctx context.Context) []sdk.SessionUpdate {
	ls.mu.Lock()
	titled := ls.titled
	ls.mu.Unlock()
	if titled {
		return nil
	}
	title, err := ls.s.Title(ctx)
	if err != nil || title == "" {
		return nil
	}
	ls.mu.Lock()
	ls.titled = true
	ls.mu.Unlock()
	return []sdk.SessionUpdate{{SessionInfoUpdate: &sdk.SessionSessionInfoUpdate{Title: sdk.Ptr(title)}}}
}

// usageUpdate adds a model call's cost to the session's and, for the
// Orchestrator's calls, tells the client how full its context is: the
// call's prompt and reply are the context the next call starts from.
func (ls *liveSession) usageUpdate(e messages.UsageUpdated) []sdk.SessionUpdate {
	ls.mu.Lock()
	ls.cost += e.Usage.Cost
	cost := ls.cost
	ls.mu.Unlock()
	size := ls.s.ContextWindow()
	if e.TaskID != "" || e.Agent != "orchestrator" || size <= 0 {
		return nil
	}
	u := &sdk.SessionUsageUpdate{Used: int(e.Usage.PromptTokens + e.Usage.CompletionTokens), Size: size}
	if !e.Usage.CostUnknown {
		u.Cost = &sdk.Cost{Amount: cost, Currency: "USD"}
	}
	return []sdk.SessionUpdate{{UsageUpdate: u}}
}

// endCalls finishes, for the client, the tool calls a finished turn left
// open: the Orchestrator's (a turn ends after its calls unless it was
// cancelled, which does not wait for them) and, after a cancel, the
// specialists' too. The spec wants every update of a turn, these final
// ones included, sent before its cancelled response.
func (ls *liveSession) endCalls(cancelled bool) []sdk.SessionUpdate {
	var ids []string
	for id, o := range ls.open {
		if o.origin.TaskID == "" || cancelled {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var out []sdk.SessionUpdate
	for _, id := range ids {
		delete(ls.open, id)
		ls.closed[id] = true
		ls.calls.drop(id)
		ls.mu.Lock()
		delete(ls.before, id)
		ls.mu.Unlock()
		content := append(ls.cards.take(id), sdk.ToolContent(sdk.TextBlock("cancelled: the turn ended before this call finished")))
		out = append(out, sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
			sdk.WithUpdateContent(content)))
	}
	return out
}

// Permission option IDs are Odin's decisions.
var permissionOptions = []sdk.PermissionOption{
	{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: sdk.PermissionOptionId(policy.AllowOnce)},
	{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Allow for this session", OptionId: sdk.PermissionOptionId(policy.AllowSession)},
	{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: sdk.PermissionOptionId(policy.Reject)},
}

// cardOf is the ACP tool call ID of the open call asking ar: the call of
// that ID made by the same agent (a guard's origin names the agent, not
// always the task its calls carry). A request no open call makes gets
// an ID of its own.
func (ls *liveSession) cardOf(ar messages.ApprovalRequested) string {
	if ar.CallID != "" {
		if id := callID(ar.Origin, ar.CallID); ls.open[id].id != "" {
			return id
		}
		var found []string
		for id, c := range ls.open {
			if c.id == ar.CallID && c.origin.Agent == ar.Origin.Agent {
				found = append(found, id)
			}
		}
		if len(found) == 1 {
			return found[0]
		}
	}
	return "approval-" + ar.ID
}

func (ls *liveSession) askPermission(ctx context.Context, ar messages.ApprovalRequested, id string) {
	title := ar.Tool + ": " + relTitle(ls.roots, ar.Subject)
	if ar.Reason != "" {
		title += " (" + ar.Reason + ")"
	}
	// The request names the tool call that asks (cardOf), so the editor
	// shows it on that call's card.
	resp, err := ls.a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(ls.s.ID()),
		ToolCall: sdk.ToolCallUpdate{
			ToolCallId: sdk.ToolCallId(id),
			Title:      sdk.Ptr(title),
			Kind:       sdk.Ptr(toolKind(ar.Tool)),
			Status:     sdk.Ptr(sdk.ToolCallStatusPending),
			RawInput:   map[string]any{"subject": ar.Subject, "reason": ar.Reason},
		},
		Options: permissionOptions,
	})
	d := policy.Reject
	if err == nil && resp.Outcome.Selected != nil {
		if pd, perr := policy.ParseDecision(string(resp.Outcome.Selected.OptionId)); perr == nil {
			d = pd
		}
	}
	// An approval withdrawn by a cancelled turn is no longer pending.
	_ = ls.s.Answer(ar.ID, d)
}

// updates maps one Odin event to ACP session updates.
func (ls *liveSession) updates(ev messages.Event) []sdk.SessionUpdate {
	switch e := ev.(type) {
	case messages.TextDelta:
		if e.TaskID == "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(e.Text)}
		}
	case messages.ReasoningDelta:
		if e.TaskID == "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(e.Text)}
		}
	case messages.ToolStarted:
		kind := toolKind(e.Name)
		var locs []sdk.ToolCallLocation
		path := inputPath(e.Input)
		if path != "" {
			locs = []sdk.ToolCallLocation{{Path: path}}
		}
		if kind == sdk.ToolKindEdit && path != "" {
			ls.mu.Lock()
			ls.before[callID(e.Origin, e.CallID)] = fileBefore{path: path, text: readText(path)}
			ls.mu.Unlock()
		}
		var raw any
		if json.Unmarshal([]byte(e.Input), &raw) != nil {
			raw = e.Input
		}
		ls.open[callID(e.Origin, e.CallID)] = openCall{origin: e.Origin, id: e.CallID}
		return []sdk.SessionUpdate{sdk.StartToolCall(sdk.ToolCallId(callID(e.Origin, e.CallID)), toolTitle(e.Origin, e.Name, relTitle(ls.roots, path)),
			sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
			sdk.WithStartLocations(locs), sdk.WithStartRawInput(raw))}
	case messages.ToolFinished:
		id := callID(e.Origin, e.CallID)
		if ls.closed[id] {
			// Its turn ended and the client was told: a card updated
			// after the response would belong to no turn.
			delete(ls.closed, id)
			return nil
		}
		delete(ls.open, id)
		status := sdk.ToolCallStatusCompleted
		if e.IsError || e.Denied {
			status = sdk.ToolCallStatusFailed
		}
		// A terminal the call ran in stays on its card.
		content := append(ls.cards.take(id), sdk.ToolContent(sdk.TextBlock(e.Output)))
		ls.mu.Lock()
		b, ok := ls.before[id]
		delete(ls.before, id)
		ls.mu.Unlock()
		if ok && status == sdk.ToolCallStatusCompleted {
			if after := readText(b.path); after != nil {
				if b.text == nil {
					content = append(content, sdk.ToolDiffContent(b.path, *after))
				} else if *b.text != *after {
					content = append(content, sdk.ToolDiffContent(b.path, *after, *b.text))
				}
			}
		}
		return []sdk.SessionUpdate{sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(status),
			sdk.WithUpdateContent(content), sdk.WithUpdateRawOutput(map[string]any{"output": e.Output, "files": e.Files}))}
	case messages.AgentStarted:
		return []sdk.SessionUpdate{sdk.StartToolCall(sdk.ToolCallId("agent-"+e.TaskID), e.Agent+": "+e.Description,
			sdk.WithStartKind(sdk.ToolKindOther), sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
			sdk.WithStartRawInput(map[string]any{"agent": e.Agent, "task": e.Description, "model": e.Model}))}
	case messages.AgentProgress:
		text := e.Agent + ": " + strings.Join(e.Activities, " · ")
		return []sdk.SessionUpdate{sdk.UpdateToolCall(sdk.ToolCallId("agent-"+e.TaskID),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}))}
	case messages.AgentFinished:
		r := e.Report
		status := sdk.ToolCallStatusCompleted
		if r.Status != messages.ReportOK {
			status = sdk.ToolCallStatusFailed
		}
		return []sdk.SessionUpdate{sdk.UpdateToolCall(sdk.ToolCallId("agent-"+r.TaskID), sdk.WithUpdateStatus(status),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(r.Summary))}))}
	case messages.TodosUpdated:
		return []sdk.SessionUpdate{planUpdate(e.Todos)}
	case messages.UsageUpdated:
		return ls.usageUpdate(e)
	case messages.SessionFenced:
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText("\n[error] " + e.Reason + "\n")}
	case messages.Notice:
		if e.Level != "info" {
			return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText("[" + e.Level + "] " + e.Text + "\n")}
		}
	}
	return nil
}

// replay renders a stored history as the updates a client shows: what the
// user and the model said, the model's reasoning, each tool call with its
// result, the diffs of its edits, and the plan as each TodoWrite set it.
func replay(root string, history []llm.Message) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	calls := map[string]llm.ToolCall{}
	for _, m := range history {
		switch m.Role {
		case llm.RoleUser:
			out = append(out, sdk.UpdateUserMessageText(m.Content))
		case llm.RoleAssistant:
			if m.Reasoning != "" {
				out = append(out, sdk.UpdateAgentThoughtText(m.Reasoning))
			}
			if m.Content != "" {
				out = append(out, sdk.UpdateAgentMessageText(m.Content))
			}
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
				path := inputPath(c.Arguments)
				var locs []sdk.ToolCallLocation
				if path != "" {
					locs = []sdk.ToolCallLocation{{Path: path}}
				}
				var raw any
				if json.Unmarshal([]byte(c.Arguments), &raw) != nil {
					raw = nil
				}
				out = append(out, sdk.StartToolCall(sdk.ToolCallId(c.ID), toolTitle(messages.Origin{}, c.Name, relTitle(workspaceRoots(root), path)),
					sdk.WithStartKind(toolKind(c.Name)), sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
					sdk.WithStartLocations(locs), sdk.WithStartRawInput(raw)))
			}
		case llm.RoleTool:
			if m.ToolCallID == "" {
				continue
			}
			c := calls[m.ToolCallID]
			failed := strings.HasPrefix(m.Content, "Error")
			status := sdk.ToolCallStatusCompleted
			if failed {
				status = sdk.ToolCallStatusFailed
			}
			content := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(m.Content))}
			if !failed {
				content = append(content, storedDiffs(c)...)
			}
			out = append(out, sdk.UpdateToolCall(sdk.ToolCallId(m.ToolCallID), sdk.WithUpdateStatus(status),
				sdk.WithUpdateContent(content)))
			if c.Name == "TodoWrite" && !failed {
				if p, ok := storedPlan(c.Arguments); ok {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// storedDiffs are the changes a stored edit call made, as its arguments
// say: the whole file for a write, each replaced span for an edit (the
// file's text then is not kept, so a span stands for the file).
func storedDiffs(c llm.ToolCall) []sdk.ToolCallContent {
	var in struct {
		FilePath  string  `json:"file_path"`
		Content   *string `json:"content"`
		OldString string  `json:"old_string"`
		NewString string  `json:"new_string"`
		Edits     []struct {
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		} `json:"edits"`
	}
	if json.Unmarshal([]byte(c.Arguments), &in) != nil || !filepath.IsAbs(in.FilePath) {
		return nil
	}
	switch c.Name {
	case "WriteFile":
		if in.Content != nil {
			return []sdk.ToolCallContent{sdk.ToolDiffContent(in.FilePath, *in.Content)}
		}
	case "EditTool":
		return []sdk.ToolCallContent{sdk.ToolDiffContent(in.FilePath, in.NewString, in.OldString)}
	case "MultiEditTool":
		var out []sdk.ToolCallContent
		for _, e := range in.Edits {
			out = append(out, sdk.ToolDiffContent(in.FilePath, e.NewString, e.OldString))
		}
		return out
	}
	return nil
}

// storedPlan is the plan a stored TodoWrite call set.
func storedPlan(args string) (sdk.SessionUpdate, bool) {
	var in struct {
		Todos []messages.Todo `json:"todos"`
	}
	if json.Unmarshal([]byte(args), &in) != nil {
		return sdk.SessionUpdate{}, false
	}
	return planUpdate(in.Todos), true
}

// planUpdate is a todo list as an ACP plan.
func planUpdate(todos []messages.Todo) sdk.SessionUpdate {
	entries := make([]sdk.PlanEntry, 0, len(todos))
	for _, t := range todos {
		st := sdk.PlanEntryStatusPending
		switch t.Status {
		case "in_progress":
			st = sdk.PlanEntryStatusInProgress
		case "completed":
			st = sdk.PlanEntryStatusCompleted
		}
		pr := sdk.PlanEntryPriorityMedium
		switch t.Priority {
		case "high":
			pr = sdk.PlanEntryPriorityHigh
		case "low":
			pr = sdk.PlanEntryPriorityLow
		}
		entries = append(entries, sdk.PlanEntry{Content: t.Content, Priority: pr, Status: st})
	}
	return sdk.UpdatePlan(entries...)
}

// callID makes tool call IDs unique across the Orchestrator and its
// specialists, whose model call IDs may repeat.
func callID(o messages.Origin, id string) string {
	if o.TaskID == "" {
		return id
	}
	return o.TaskID + "/" + id
}

// workspaceRoots is cwd as given and, when it differs, its real path.
func workspaceRoots(cwd string) []string {
	if cwd == "" {
		return nil
	}
	roots := []string{cwd}
	if real, err := filepath.EvalSymlinks(cwd); err == nil && real != cwd {
		roots = append(roots, real)
	}
	return roots
}

// relTitle shows a path inside the session's workspace relative to it,
// for a title; anything else is left as it is.
func relTitle(roots []string, s string) string {
	for _, r := range roots {
		if rel := present.RelPath(r, s); rel != s {
			return rel
		}
	}
	return s
}

func toolTitle(o messages.Origin, name, path string) string {
	t := name
	if path != "" {
		t += " " + path
	}
	if o.TaskID != "" && o.Agent != "" {
		t = o.Agent + ": " + t
	}
	return t
}

// toolKind says how an editor shows a tool: by its class of effect.
func toolKind(name string) sdk.ToolKind {
	switch name {
	case "ReadFile", "LS", "Tree", "GitDiff":
		return sdk.ToolKindRead
	case "Grep", "Glob":
		return sdk.ToolKindSearch
	case "WriteFile", "EditTool", "MultiEditTool":
		return sdk.ToolKindEdit
	case "ExecuteCommand":
		return sdk.ToolKindExecute
	case "WebFetch", "WebSearch":
		return sdk.ToolKindFetch
	case "TodoWrite", "ContextSummarizer":
		return sdk.ToolKindThink
	}
	return sdk.ToolKindOther
}

// inputPath finds the absolute path a tool call is about, if any.
func inputPath(input string) string {
	var in map[string]any
	if json.Unmarshal([]byte(input), &in) != nil {
		return ""
	}
	for _, k := range []string{"file_path", "path"} {
		if p, ok := in[k].(string); ok && filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
	}
	return ""
}

// maxDiffFile bounds the files whose before and after texts are sent.
const maxDiffFile = 1 << 20

func readText(path string) *string {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxDiffFile {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := string(b)
	return &s
}

// configUpdate tells the client the config options' current values after
// a change made through session/set_mode or session/set_model.
func (ls *liveSession) configUpdate() sdk.SessionUpdate {
	return sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: ls.configOptions()}}
}

package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
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

	approvals sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

type fileBefore struct {
	path string
	text *string // nil when the file did not exist
}

// add registers s and starts its event pump. The bus subscription is made
// before anything is submitted, so no event of a turn is missed.
func (a *Agent) add(s Session) *liveSession {
	ctx, stop := context.WithCancel(context.Background())
	ls := &liveSession{a: a, s: s, stop: stop, done: make(chan struct{}), mode: a.opts.Mode,
		waiting: map[string]chan messages.TurnResult{}, before: map[string]fileBefore{}}
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
		ls.approvals.Wait()
	})
	return ls.closeErr
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
// a notification, so sending one never waits for the editor.
func (ls *liveSession) pump(ctx context.Context, evs <-chan messages.Envelope) {
	defer close(ls.done)
	id := sdk.SessionId(ls.s.ID())
	for env := range evs {
		if tf, ok := env.Event.(messages.TurnFinished); ok {
			ls.mu.Lock()
			ch := ls.waiting[tf.Result.Input.ID]
			ls.mu.Unlock()
			if ch != nil {
				ch <- tf.Result
			}
			continue
		}
		if ar, ok := env.Event.(messages.ApprovalRequested); ok {
			// Asking waits for the user: never in the pump, whose
			// subscription Publish (and so Answer) waits for.
			ls.approvals.Add(1)
			go func() {
				defer ls.approvals.Done()
				ls.askPermission(ctx, ar)
			}()
			continue
		}
		for _, u := range ls.updates(env.Event) {
			if err := ls.a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: id, Update: u}); err != nil {
				ls.a.opts.Log.Debug("acp: session/update", "err", err)
			}
		}
	}
}

// Permission option IDs are Odin's decisions.
var permissionOptions = []sdk.PermissionOption{
	{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: sdk.PermissionOptionId(policy.AllowOnce)},
	{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Allow for this session", OptionId: sdk.PermissionOptionId(policy.AllowSession)},
	{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: sdk.PermissionOptionId(policy.Reject)},
}

func (ls *liveSession) askPermission(ctx context.Context, ar messages.ApprovalRequested) {
	title := ar.Tool + ": " + ar.Subject
	if ar.Reason != "" {
		title += " (" + ar.Reason + ")"
	}
	resp, err := ls.a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(ls.s.ID()),
		ToolCall: sdk.ToolCallUpdate{
			ToolCallId: sdk.ToolCallId("approval-" + ar.ID),
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
		return []sdk.SessionUpdate{sdk.StartToolCall(sdk.ToolCallId(callID(e.Origin, e.CallID)), toolTitle(e.Origin, e.Name, path),
			sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
			sdk.WithStartLocations(locs), sdk.WithStartRawInput(raw))}
	case messages.ToolFinished:
		id := callID(e.Origin, e.CallID)
		status := sdk.ToolCallStatusCompleted
		if e.IsError || e.Denied {
			status = sdk.ToolCallStatusFailed
		}
		content := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(e.Output))}
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
		entries := make([]sdk.PlanEntry, 0, len(e.Todos))
		for _, t := range e.Todos {
			st := sdk.PlanEntryStatusPending
			switch t.Status {
			case "in_progress":
				st = sdk.PlanEntryStatusInProgress
			case "completed":
				st = sdk.PlanEntryStatusCompleted
			}
			entries = append(entries, sdk.PlanEntry{Content: t.Content, Priority: sdk.PlanEntryPriorityMedium, Status: st})
		}
		return []sdk.SessionUpdate{sdk.UpdatePlan(entries...)}
	case messages.SessionFenced:
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText("\n[error] " + e.Reason + "\n")}
	case messages.Notice:
		if e.Level != "info" {
			return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText("[" + e.Level + "] " + e.Text + "\n")}
		}
	}
	return nil
}

// replay renders a stored history as the updates a client shows.
func replay(history []llm.Message) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	for _, m := range history {
		switch m.Role {
		case llm.RoleUser:
			out = append(out, sdk.UpdateUserMessageText(m.Content))
		case llm.RoleAssistant:
			if m.Content != "" {
				out = append(out, sdk.UpdateAgentMessageText(m.Content))
			}
			for _, c := range m.ToolCalls {
				path := inputPath(c.Arguments)
				var locs []sdk.ToolCallLocation
				if path != "" {
					locs = []sdk.ToolCallLocation{{Path: path}}
				}
				out = append(out, sdk.StartToolCall(sdk.ToolCallId(c.ID), toolTitle(messages.Origin{}, c.Name, path),
					sdk.WithStartKind(toolKind(c.Name)), sdk.WithStartStatus(sdk.ToolCallStatusCompleted), sdk.WithStartLocations(locs)))
			}
		case llm.RoleTool:
			if m.ToolCallID != "" {
				out = append(out, sdk.UpdateToolCall(sdk.ToolCallId(m.ToolCallID),
					sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(m.Content))})))
			}
		}
	}
	return out
}

// callID makes tool call IDs unique across the Orchestrator and its
// specialists, whose model call IDs may repeat.
func callID(o messages.Origin, id string) string {
	if o.TaskID == "" {
		return id
	}
	return o.TaskID + "/" + id
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

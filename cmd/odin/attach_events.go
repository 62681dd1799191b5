package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/odin-code/odin/messages"
)

// attachEventKinds decode the events odin serve streams back into
// Odin's types, so that odin attach renders them with the REPL's own
// transcript. A type missing here (a newer server's event) is skipped: the
// REPL would not know how to draw it anyway.
var attachEventKinds = map[string]func([]byte) (messages.Event, error){
	"input_queued":          decodeEventAs[messages.InputQueued],
	"input_removed":         decodeEventAs[messages.InputRemoved],
	"turn_started":          decodeEventAs[messages.TurnStarted],
	"text_delta":            decodeEventAs[messages.TextDelta],
	"reasoning_delta":       decodeEventAs[messages.ReasoningDelta],
	"retrying":              decodeEventAs[messages.Retrying],
	"rate_limited":          decodeEventAs[messages.RateLimited],
	"tool_started":          decodeEventAs[messages.ToolStarted],
	"tool_finished":         decodeEventAs[messages.ToolFinished],
	"agent_started":         decodeEventAs[messages.AgentStarted],
	"agent_progress":        decodeEventAs[messages.AgentProgress],
	"agent_restarted":       decodeEventAs[messages.AgentRestarted],
	"agent_finished":        decodeEventAs[messages.AgentFinished],
	"usage":                 decodeEventAs[messages.UsageUpdated],
	"todos":                 decodeEventAs[messages.TodosUpdated],
	"gate_decided":          decodeEventAs[messages.GateDecided],
	"gate_stage":            decodeEventAs[messages.GateStage],
	"notice":                decodeEventAs[messages.Notice],
	"approval_requested":    decodeEventAs[messages.ApprovalRequested],
	"approval_resolved":     decodeEventAs[messages.ApprovalResolved],
	"elicitation_requested": decodeEventAs[messages.ElicitationRequested],
	"elicitation_resolved":  decodeEventAs[messages.ElicitationResolved],
	"compacted":             decodeEventAs[messages.Compacted],
	"turn_finished":         decodeEventAs[messages.TurnFinished],
	"init":                  decodeEventAs[messages.Init],
	"resync":                decodeEventAs[messages.Resync],
	"session_fenced":        decodeEventAs[messages.SessionFenced],
	"budget_exceeded":       decodeEventAs[messages.BudgetExceeded],
	"no_progress":           decodeEventAs[messages.NoProgress],
}

// decodeEventAs reads an envelope's JSON (type, session and time beside
// the event's own fields) as the event T.
func decodeEventAs[T messages.Event](b []byte) (messages.Event, error) {
	var ev T
	err := json.Unmarshal(b, &ev)
	return ev, err
}

// decodeAttachEvent turns one SSE event of odin serve into an envelope;
// ok is false for a type attach does not know.
func decodeAttachEvent(typ string, data []byte) (env messages.Envelope, ok bool, err error) {
	dec, known := attachEventKinds[typ]
	if !known {
		return messages.Envelope{}, false, nil
	}
	ev, err := dec(data)
	if err != nil {
		return messages.Envelope{}, false, fmt.Errorf("event %s: %w", typ, err)
	}
	var head struct {
		Session string    `json:"session"`
		Time    time.Time `json:"time"`
	}
	_ = json.Unmarshal(data, &head)
	env.Event, env.Session, env.Time = ev, head.Session, head.Time
	return env, true, nil
}

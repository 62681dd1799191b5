package cluster

import (
	"encoding/json"
	"fmt"

	"github.com/odin-code/odin/messages"
)

// eventKinds decodes the events a front needs as their own types: the
// server counts turns from TurnFinished and InputRemoved, and tracks
// approvals and MCP servers' requests for input. Every other event
// crosses as a RawEvent, forwarded to SSE clients untouched, so a newer
// worker's new event types still reach them.
var eventKinds = map[string]func([]byte) (messages.Event, error){
	"turn_finished":      decodeAs[messages.TurnFinished],
	"turn_started":       decodeAs[messages.TurnStarted],
	"input_queued":       decodeAs[messages.InputQueued],
	"input_removed":      decodeAs[messages.InputRemoved],
	"approval_requested": decodeAs[messages.ApprovalRequested],
	"approval_resolved":  decodeAs[messages.ApprovalResolved],
	"resync":             decodeAs[messages.Resync],
	"notice":             decodeAs[messages.Notice],
	// serve's elicitation API lists and answers these.
	"elicitation_requested": decodeAs[messages.ElicitationRequested],
	"elicitation_resolved":  decodeAs[messages.ElicitationResolved],
}

func decodeAs[T messages.Event](b []byte) (messages.Event, error) {
	var ev T
	err := json.Unmarshal(b, &ev)
	return ev, err
}

// RawEvent is an event as another node rendered it: its type and its
// fields' JSON object (the local envelope adds type, session and time).
type RawEvent struct {
	Type string
	Body json.RawMessage
}

// EventType implements messages.Event.
func (e RawEvent) EventType() string { return e.Type }

// MarshalJSON returns the body as it came.
func (e RawEvent) MarshalJSON() ([]byte, error) {
	if len(e.Body) == 0 {
		return []byte("{}"), nil
	}
	return e.Body, nil
}

// encodeEvent renders an envelope of the session's bus for the wire.
func encodeEvent(env messages.Envelope, seq uint64, epoch int64) (*Event, error) {
	body, err := json.Marshal(env.Event)
	if err != nil {
		return nil, fmt.Errorf("cluster: event %s: %w", env.Event.EventType(), err)
	}
	return &Event{Seq: seq, Epoch: epoch, Type: env.Event.EventType(), Time: env.Time, Body: body}, nil
}

// decodeEvent turns a wire event back into a messages.Event.
func decodeEvent(e *Event) messages.Event {
	if dec, ok := eventKinds[e.Type]; ok {
		if ev, err := dec(e.Body); err == nil {
			return ev
		}
	}
	return RawEvent{Type: e.Type, Body: e.Body}
}

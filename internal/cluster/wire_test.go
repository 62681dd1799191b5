package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// TestWireRoundTrip: every kind crosses as an Any (which protobuf
// serializes, as the remote will) and comes back equal.
func TestWireRoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, msg := range []any{
		&Submit{InputID: "in-1", Body: "héllo\n\"quoted\"", Mode: messages.Mode("ask")},
		&Accepted{InputID: "in-1", MessageID: "m-1", Epoch: 3, Dup: true},
		&Cancel{Reason: "user"},
		&Answer{ApprovalID: "a-1", Decision: policy.AllowSession},
		&QueueRequest{},
		&RemoveQueued{ID: "m-2"},
		&Queue{State: messages.QueueState{Running: &messages.UserMessage{ID: "m-1", Body: "b"}, Queued: []messages.UserMessage{{ID: "m-2"}}}},
		&Subscribe{Address: "127.0.0.1:1", ID: "sub", LastSeq: 41, Epoch: 2},
		&Subscribed{Epoch: 2, Node: "n", Address: "127.0.0.1:2", ID: "g"},
		&Event{Seq: 7, Epoch: 2, Type: "text_delta", Time: at, Body: []byte(`{"text":"x"}`)},
		&Passivated{Epoch: 2},
		&Ack{},
		&Failure{Error: "boom", Fenced: true},
	} {
		env, err := Encode(msg)
		if err != nil {
			t.Fatalf("encode %T: %v", msg, err)
		}
		raw, err := proto.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		var back anypb.Any
		if err := proto.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		got, err := Decode(&back)
		if err != nil {
			t.Fatalf("decode %T: %v", msg, err)
		}
		if diff := cmp.Diff(msg, got); diff != "" {
			t.Errorf("%T (-sent +received):\n%s", msg, diff)
		}
	}
}

func TestWireRejects(t *testing.T) {
	if _, err := Encode(&struct{ X int }{}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("encode of an unregistered type: %v, want ErrUnknownKind", err)
	}
	if _, err := Encode(Ack{}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("encode of a value, not a pointer: %v, want ErrUnknownKind", err)
	}
	for _, env := range []*anypb.Any{
		{TypeUrl: typePrefix + "from_a_newer_odin", Value: []byte(`{}`)},
		{TypeUrl: "type.googleapis.com/google.protobuf.Empty"},
	} {
		if _, err := Decode(env); !errors.Is(err, ErrUnknownKind) {
			t.Errorf("decode %s: %v, want ErrUnknownKind", env.TypeUrl, err)
		}
	}
	if _, err := Decode(&anypb.Any{TypeUrl: typePrefix + "submit", Value: []byte(`{"input_id": 5`)}); err == nil || errors.Is(err, ErrUnknownKind) {
		t.Errorf("decode of broken JSON: %v, want a decode error", err)
	}
	if (&Failure{Error: "x", Fenced: true}).Err() == nil || !errors.Is((&Failure{Fenced: true}).Err(), ErrMoved) {
		t.Error("a fenced failure must wrap ErrMoved")
	}
}

// TestEvents: the events a front acts on come back typed; others pass
// through as the JSON the worker rendered.
func TestEvents(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tf := messages.TurnFinished{Result: messages.TurnResult{Input: messages.UserMessage{ID: "m-1", Body: "hi"}, Status: messages.TurnDone, Answer: "hello"}}
	ev, err := encodeEvent(messages.Envelope{Session: "s", Time: at, Event: tf}, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 5 || ev.Epoch != 2 || ev.Type != "turn_finished" || !ev.Time.Equal(at) {
		t.Errorf("wire event %+v", ev)
	}
	if diff := cmp.Diff(messages.Event(tf), decodeEvent(ev)); diff != "" {
		t.Errorf("turn_finished (-want +got):\n%s", diff)
	}
	td := messages.TextDelta{Text: "chunk"}
	ev, err = encodeEvent(messages.Envelope{Session: "s", Time: at, Event: td}, 6, 2)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeEvent(ev)
	raw, ok := got.(RawEvent)
	if !ok || raw.EventType() != "text_delta" {
		t.Fatalf("text_delta decoded as %#v", got)
	}
	// The front's SSE line is what the worker's bus would have written.
	local, err := messages.Envelope{Session: "s", Time: at, Event: td}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	remote, err := messages.Envelope{Session: "s", Time: at, Event: got}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(local) != string(remote) {
		t.Errorf("SSE JSON differs:\nlocal  %s\nremote %s", local, remote)
	}
}

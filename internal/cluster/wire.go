package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/messages"
)

// typePrefix starts the type URL of every envelope Odin sends: the remote
// serializes protobuf only (a plain Go struct is dropped between nodes
// without a word), so every message crosses as a google.protobuf.Any whose
// type URL names the Odin kind and whose value is the message's JSON. The
// spike measured JSON in Any within noise of hand-written protobuf.
const typePrefix = "odin.dev/"

// ErrUnknownKind: an envelope names a kind this build does not know (a
// newer peer); it is reported, never a panic, so version skew costs a
// message, not a connection.
var ErrUnknownKind = errors.New("cluster: unknown message kind")

// registry maps wire kinds to Go types and back.
type registry struct {
	mu     sync.RWMutex
	byName map[string]reflect.Type // kind → struct type
	byType map[reflect.Type]string // struct type → kind
}

// wire is the registry of every kind Odin sends between nodes.
var wire = &registry{byName: map[string]reflect.Type{}, byType: map[reflect.Type]string{}}

// register adds the struct type of sample (a pointer) as kind.
func (r *registry) register(kind string, sample any) {
	t := reflect.TypeOf(sample)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("cluster: register %s: want a pointer to a struct, got %s", kind, t))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[kind]; dup {
		panic("cluster: kind registered twice: " + kind)
	}
	r.byName[kind], r.byType[t.Elem()] = t.Elem(), kind
}

// Encode wraps msg (a pointer to a registered type) in the envelope.
func Encode(msg any) (*anypb.Any, error) {
	t := reflect.TypeOf(msg)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("cluster: encode %T: %w", msg, ErrUnknownKind)
	}
	wire.mu.RLock()
	kind, ok := wire.byType[t.Elem()]
	wire.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("cluster: encode %T: %w", msg, ErrUnknownKind)
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("cluster: encode %s: %w", kind, err)
	}
	return &anypb.Any{TypeUrl: typePrefix + kind, Value: b}, nil
}

// Decode unwraps an envelope into a new value of its registered type (a
// pointer). ErrUnknownKind for a kind this build does not know.
func Decode(env *anypb.Any) (any, error) {
	kind, ok := strings.CutPrefix(env.GetTypeUrl(), typePrefix)
	if !ok {
		return nil, fmt.Errorf("cluster: decode %q: not an Odin envelope: %w", env.GetTypeUrl(), ErrUnknownKind)
	}
	wire.mu.RLock()
	t, ok := wire.byName[kind]
	wire.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("cluster: decode %q: %w", kind, ErrUnknownKind)
	}
	v := reflect.New(t)
	if err := json.Unmarshal(env.Value, v.Interface()); err != nil {
		return nil, fmt.Errorf("cluster: decode %s: %w", kind, err)
	}
	return v.Interface(), nil
}

// The front ↔ session protocol. Requests go to the grain with
// cluster.Request; events go from the grain to each subscriber.

// Submit queues an input in the session. InputID is made by the front,
// so a retried Submit (requests are at least once) is recognised.
type Submit struct {
	InputID string        `json:"input_id"`
	Body    string        `json:"body"`
	Mode    messages.Mode `json:"mode,omitempty"`
}

// Accepted answers Submit: the session's message ID for the input, the
// epoch of the activation that answered, the input's state in the
// session's input ledger (accepted or done; empty for a session without
// one), and Dup when the input ID had been taken before, by this
// activation or an earlier one on any node.
type Accepted struct {
	InputID   string `json:"input_id"`
	MessageID string `json:"message_id"`
	Epoch     int64  `json:"epoch"`
	State     string `json:"state,omitempty"`
	Dup       bool   `json:"dup,omitempty"`
}

// Cancel cancels the session's running turn; answered by Ack.
type Cancel struct {
	Reason string `json:"reason"`
}

// Answer answers a pending approval; answered by Ack or Failure.
type Answer struct {
	ApprovalID string          `json:"approval_id"`
	Decision   policy.Decision `json:"decision"`
}

// AnswerElicitation answers an MCP server's pending request for input
// (serve.Elicitor); answered by Ack, or by Failure with Invalid set when
// the accepted content does not fit the server's form (the request stays
// pending, to be answered again).
type AnswerElicitation struct {
	ElicitationID string         `json:"elicitation_id"`
	Action        string         `json:"action"`
	Content       map[string]any `json:"content,omitempty"`
}

// QueueRequest asks for the running input and the queue; answered by
// Queue.
type QueueRequest struct{}

// RemoveQueued drops a queued input; answered by Queue.
type RemoveQueued struct {
	ID string `json:"id"`
}

// Queue carries the session's queue.
type Queue struct {
	State messages.QueueState `json:"state"`
}

// Subscribe makes the subscriber actor at Address/ID receive the
// session's events, replaying those after LastSeq when the grain still
// holds them. Epoch is the epoch of the last event the subscriber saw (0
// for none): events of another activation cannot be replayed, so a
// subscriber that saw an older epoch gets one resync event instead.
// Answered by Subscribed.
type Subscribe struct {
	Address string `json:"address"`
	ID      string `json:"id"`
	LastSeq uint64 `json:"last_seq"`
	Epoch   int64  `json:"epoch"`
}

// Subscribed answers Subscribe: the grain's epoch, node and PID (which
// the subscriber watches).
type Subscribed struct {
	Epoch   int64  `json:"epoch"`
	Node    string `json:"node"`
	Address string `json:"address"`
	ID      string `json:"id"`
	// Pending are the approvals this activation waits for: the
	// subscriber's list is replaced by them, so that approvals a lost
	// activation asked (which nobody can answer any more) disappear, and
	// those its successor asks again appear.
	Pending []messages.ApprovalRequested `json:"pending,omitempty"`
	// Elicitations are the MCP servers' requests for input this
	// activation waits for, replacing the subscriber's list likewise.
	Elicitations []messages.ElicitationRequested `json:"elicitations,omitempty"`
}

// Event is one session event: its sequence number within the epoch, the
// epoch, and the event as the session's bus renders it (Type and Body,
// the JSON object the SSE stream carries).
type Event struct {
	Seq   uint64          `json:"seq"`
	Epoch int64           `json:"epoch"`
	Type  string          `json:"type"`
	Time  time.Time       `json:"time"`
	Body  json.RawMessage `json:"body"`
}

// Passivated tells subscribers that the grain stopped because it was
// idle: they stop listening until the next request reactivates it,
// rather than reactivating it at once.
type Passivated struct {
	Epoch int64 `json:"epoch"`
}

// Ack answers a request that returns nothing.
type Ack struct{}

// Failure answers a request the grain could not carry out. Fenced is set
// when the session belongs to a newer claim: the caller looks it up
// again.
type Failure struct {
	Error  string `json:"error"`
	Fenced bool   `json:"fenced,omitempty"`
	// Invalid: an answer to an elicitation did not fit its form.
	Invalid bool `json:"invalid,omitempty"`
}

func (f *Failure) Err() error {
	if f.Fenced {
		return fmt.Errorf("cluster: %s: %w", f.Error, ErrMoved)
	}
	if f.Invalid {
		return fmt.Errorf("cluster: %s: %w", f.Error, serve.ErrInvalidAnswer)
	}
	return errors.New("cluster: " + f.Error)
}

// ErrMoved: the grain that answered no longer owns the session.
var ErrMoved = errors.New("the session moved to another node")

func init() {
	for kind, sample := range map[string]any{
		"submit": &Submit{}, "accepted": &Accepted{}, "cancel": &Cancel{}, "answer": &Answer{},
		"queue_request": &QueueRequest{}, "remove_queued": &RemoveQueued{}, "queue": &Queue{},
		"subscribe": &Subscribe{}, "subscribed": &Subscribed{}, "event": &Event{},
		"passivated": &Passivated{}, "ack": &Ack{}, "failure": &Failure{}, "answer_elicitation": &AnswerElicitation{},
	} {
		wire.register(kind, sample)
	}
}

package term

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// fakeSession is a Session whose Orchestrator is a function: onSubmit
// decides which events each input produces. It records what the REPL
// asked of it.
type fakeSession struct {
	id       string
	onSubmit func(f *fakeSession, m messages.UserMessage)

	mu        sync.Mutex
	n         int
	submitted []messages.UserMessage
	cancels   []string
	removed   []string
	answers   map[string]policy.Decision
	pending   []messages.ApprovalRequested
	subs      []chan messages.Envelope
	closed    bool
}

func newFake(id string, onSubmit func(*fakeSession, messages.UserMessage)) *fakeSession {
	return &fakeSession{id: id, onSubmit: onSubmit, answers: map[string]policy.Decision{}}
}

func (f *fakeSession) ID() string { return f.id }

func (f *fakeSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	return f.SubmitImages(body, mode, nil)
}

func (f *fakeSession) SubmitImages(body string, mode messages.Mode, images []messages.Image) messages.UserMessage {
	f.mu.Lock()
	f.n++
	m := messages.UserMessage{ID: fmt.Sprintf("in-%d", f.n), Body: body, Mode: mode, At: time.Unix(0, 0), Images: images}
	f.submitted = append(f.submitted, m)
	f.mu.Unlock()
	if f.onSubmit != nil {
		f.onSubmit(f, m)
	}
	return m
}

func (f *fakeSession) Cancel(reason string) {
	f.mu.Lock()
	f.cancels = append(f.cancels, reason)
	f.mu.Unlock()
}

func (f *fakeSession) Queue(context.Context) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}

func (f *fakeSession) Remove(_ context.Context, id string) (*messages.QueueState, error) {
	f.mu.Lock()
	f.removed = append(f.removed, id)
	f.mu.Unlock()
	return &messages.QueueState{}, nil
}

// Subscribe closes the channel when ctx ends, as the bus does.
func (f *fakeSession) Subscribe(ctx context.Context) <-chan messages.Envelope {
	ch := make(chan messages.Envelope, 1024)
	f.mu.Lock()
	f.subs = append(f.subs, ch)
	f.mu.Unlock()
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, c := range f.subs {
			if c == ch {
				f.subs = append(f.subs[:i:i], f.subs[i+1:]...)
				close(ch)
				return
			}
		}
	}()
	return ch
}

// emit publishes events to every subscriber.
func (f *fakeSession) emit(evs ...messages.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range evs {
		for _, ch := range f.subs {
			ch <- messages.Envelope{Session: f.id, Event: ev}
		}
	}
}

func (f *fakeSession) Answer(id string, d policy.Decision) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[id] = d
	return nil
}

func (f *fakeSession) Pending() []messages.ApprovalRequested {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]messages.ApprovalRequested(nil), f.pending...)
}

func (f *fakeSession) Close(context.Context) error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}

func (f *fakeSession) snapshot() (submitted []messages.UserMessage, cancels, removed []string, answers map[string]policy.Decision) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := map[string]policy.Decision{}
	for k, v := range f.answers {
		a[k] = v
	}
	return append([]messages.UserMessage(nil), f.submitted...), append([]string(nil), f.cancels...), append([]string(nil), f.removed...), a
}

// answerAt answers every input at once with text, as one finished turn.
func answerAt(text string) func(*fakeSession, messages.UserMessage) {
	return func(f *fakeSession, m messages.UserMessage) {
		f.emit(messages.TurnStarted{Input: m},
			messages.TextDelta{Origin: messages.Origin{Agent: "orchestrator"}, Text: text + " " + m.Body + "\n"},
			messages.TurnFinished{Result: messages.TurnResult{Input: m, Status: messages.TurnDone, Usage: messages.Usage{PromptTokens: 100, CompletionTokens: 10, Cost: 0.01}, ByAgent: []messages.AgentUsage{{Agent: "orchestrator", Model: "m", Usage: messages.Usage{PromptTokens: 100, CompletionTokens: 10, Cost: 0.01}}}}})
	}
}

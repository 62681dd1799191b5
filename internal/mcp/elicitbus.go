package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"sync"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/internal/elicit"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// ErrUnknownElicitation is returned by BusElicitor.Answer for an ID that is
// not pending (answered already, withdrawn, or never asked).
var ErrUnknownElicitation = errors.New("mcp: no such pending elicitation")

// ErrInvalidAnswer wraps an accepted answer the form refuses; the request
// stays pending so that the front end can answer again.
var ErrInvalidAnswer = errors.New("mcp: the answer does not fit the form")

// Elicitation actions (ElicitResult.Action).
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// BusElicitor asks the user through a session's event bus, as
// policy.BusApprover asks approvals: Elicit publishes
// messages.ElicitationRequested and waits for the front end to call
// Answer, or for the call's context to end (the request is then withdrawn
// with ElicitationResolved "cancel"). Safe for concurrent use.
type BusElicitor struct {
	bus   *events.Bus
	newID func() string

	mu      sync.Mutex
	pending map[string]*pendingElicitation
}

type pendingElicitation struct {
	event  messages.ElicitationRequested
	form   elicit.Form
	answer chan *sdk.ElicitResult
}

// NewBusElicitor returns an elicitor publishing on bus; newID makes
// request IDs (nil: random UUIDs).
func NewBusElicitor(bus *events.Bus, newID func() string) *BusElicitor {
	if newID == nil {
		newID = uuid.NewString
	}
	return &BusElicitor{bus: bus, newID: newID, pending: map[string]*pendingElicitation{}}
}

// Elicit is an ElicitFunc: it asks and waits. A form whose schema MCP does
// not allow is declined at once, with a notice saying why.
func (b *BusElicitor) Elicit(ctx context.Context, e Elicitation) (*sdk.ElicitResult, error) {
	p := &pendingElicitation{
		event:  messages.ElicitationRequested{ID: b.newID(), Server: e.Server, Mode: "form", Message: e.Message},
		answer: make(chan *sdk.ElicitResult, 1),
	}
	decline := func(why string) (*sdk.ElicitResult, error) {
		if e.Publish == nil {
			e.Publish = func(ev any) {
				if m, ok := ev.(messages.Event); ok {
					b.bus.Publish(m)
				}
			}
		}
		DeclineNotice(e, why)
		return &sdk.ElicitResult{Action: ActionDecline}, nil
	}
	if e.URL != "" {
		// Only a web page is offered to open: a file:, javascript: or
		// custom-scheme URL from a server is not something to click.
		if u, err := url.Parse(e.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return decline("its URL is not an http(s) address")
		}
		p.event.Mode, p.event.URL = "url", e.URL
	} else {
		form, err := elicit.ParseForm(e.Schema)
		if err != nil {
			return decline(err.Error())
		}
		p.form = form
		if e.Schema != nil {
			raw, err := json.Marshal(e.Schema)
			if err == nil {
				p.event.Schema = raw
			}
		}
	}
	if ref, ok := tool.CallOf(ctx); ok {
		p.event.CallID = ref.ID
	}
	b.mu.Lock()
	b.pending[p.event.ID] = p
	b.mu.Unlock()
	// Outside the lock: a lossless subscriber may answer before Publish
	// returns.
	b.bus.Publish(p.event)
	select {
	case res := <-p.answer:
		return res, nil
	case <-ctx.Done():
		b.mu.Lock()
		_, still := b.pending[p.event.ID]
		delete(b.pending, p.event.ID)
		b.mu.Unlock()
		if still {
			b.bus.Publish(messages.ElicitationResolved{ID: p.event.ID, Action: ActionCancel})
		}
		return nil, fmt.Errorf("mcp: waiting for the user's input to %s: %w", e.Server, ctx.Err())
	}
}

// Answer resolves the pending request id. An accepted form's content is
// checked against the form (defaults applied to omitted fields); when it
// does not fit, the error wraps ErrInvalidAnswer and the request stays
// pending. A URL-mode request is accepted without content.
func (b *BusElicitor) Answer(id, action string, content map[string]any) error {
	switch action {
	case ActionAccept, ActionDecline, ActionCancel:
	default:
		return fmt.Errorf("mcp: invalid action %q (accept, decline or cancel)", action)
	}
	b.mu.Lock()
	p, ok := b.pending[id]
	if !ok {
		b.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownElicitation, id)
	}
	res := &sdk.ElicitResult{Action: action}
	if action == ActionAccept && p.event.Mode == "form" {
		c, err := p.form.Complete(content)
		if err != nil {
			b.mu.Unlock()
			return fmt.Errorf("%w: %w", ErrInvalidAnswer, err)
		}
		res.Content = c
	}
	delete(b.pending, id)
	b.mu.Unlock()
	p.answer <- res
	b.bus.Publish(messages.ElicitationResolved{ID: id, Action: action})
	return nil
}

// Pending returns the requests waiting for an answer, sorted by ID.
func (b *BusElicitor) Pending() []messages.ElicitationRequested {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]messages.ElicitationRequested, 0, len(b.pending))
	for _, p := range b.pending {
		out = append(out, p.event)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

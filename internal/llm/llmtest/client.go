package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/odin-code/odin/internal/llm"
)

// Client plays a Script in process, without HTTP, for fast unit tests of
// code that takes an llm.Client. It emits the same events as the real
// adapter. It does not retry: a fault step (Status, CutAfter,
// ErrorMidstream) comes back as the classified *llm.Error the adapter would
// return once its retries are exhausted. Quirks shape the wire only and are
// ignored here, except NoUsage. It is safe for concurrent use.
type Client struct {
	book  *book
	gates gates
	model string
	stop  chan struct{}

	mu        sync.Mutex
	requests  []llm.Request
	inFlight  int
	maxFlight int
	closeOnce sync.Once
}

var _ llm.Client = (*Client)(nil)

// NewClient returns a Client playing script, with {{name}} replaced from
// vars (which may be nil).
func NewClient(script *Script, vars map[string]string) (*Client, error) {
	s, err := prepare(script, vars)
	if err != nil {
		return nil, err
	}
	return &Client{book: newBook(s), model: s.Model, stop: make(chan struct{})}, nil
}

// Close ends every held or delayed call.
func (c *Client) Close() { c.closeOnce.Do(func() { close(c.stop) }) }

// Release lets every call held (now or later) at name proceed.
func (c *Client) Release(name string) { c.gates.release(name) }

// WaitHeld returns once a call has been held at name, or ctx's error.
func (c *Client) WaitHeld(ctx context.Context, name string) error { return c.gates.waitHeld(ctx, name) }

// Requests returns every request received so far, in arrival order.
func (c *Client) Requests() []llm.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests)
}

// RequestsFor returns the requests whose Agent was agent ("" counts as
// DefaultAgent).
func (c *Client) RequestsFor(agent string) []llm.Request {
	var out []llm.Request
	for _, r := range c.Requests() {
		a := r.Agent
		if a == "" {
			a = DefaultAgent
		}
		if a == agent {
			out = append(out, r)
		}
	}
	return out
}

// MaxInFlight is the largest number of calls in progress at once.
func (c *Client) MaxInFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxFlight
}

// Unused describes the steps no call has consumed.
func (c *Client) Unused() []string { return c.book.unused() }

// Stream implements llm.Client.
func (c *Client) Stream(ctx context.Context, req llm.Request, onEvent func(llm.Event)) (*llm.Response, error) {
	if onEvent == nil {
		onEvent = func(llm.Event) {}
	}
	c.mu.Lock()
	c.requests = append(c.requests, req)
	c.inFlight++
	c.maxFlight = max(c.maxFlight, c.inFlight)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}()

	agent := req.Agent
	if agent == "" {
		agent = DefaultAgent
	}
	pool, idx, st, ok := c.book.take(agent, lastTurnTexts(req.Messages))
	if !ok {
		return nil, &llm.Error{Kind: llm.KindServer, StatusCode: http.StatusInternalServerError, Message: exhausted(agent, pool, req.Messages), Attempts: 1}
	}
	canceled := func(err error) error {
		return &llm.Error{Kind: llm.KindCanceled, Message: err.Error(), Attempts: 1, Err: err}
	}
	if st.Hold != "" {
		if err := c.gates.wait(ctx, c.stop, st.Hold); err != nil {
			return nil, canceled(err)
		}
	}
	if err := sleep(ctx, c.stop, st.Latency); err != nil {
		return nil, canceled(err)
	}
	if st.Status != 0 {
		return nil, statusError(st)
	}
	if st.CutAfter > 0 && !st.ErrorMidstream {
		return nil, &llm.Error{Kind: llm.KindNetwork, Message: "stream ended before the response finished", Attempts: 1}
	}
	if st.ErrorMidstream {
		e := defaultError(http.StatusInternalServerError)
		if st.Error != nil {
			e = *st.Error
		}
		return nil, &llm.Error{Kind: llm.KindServer, Message: "in stream: " + e.Message, Attempts: 1}
	}

	model := req.Model
	if model == "" {
		model = c.model
	}
	prompt := llm.EstimateMessages(req.Messages) + llm.EstimateTools(req.Tools)
	t := newTurn(st, model, pool, idx, 0, prompt, true)
	n := t.chunkSize()
	emit := func(ev llm.Event) error {
		if err := sleep(ctx, c.stop, st.ChunkDelay); err != nil {
			return canceled(err)
		}
		onEvent(ev)
		return nil
	}
	for _, p := range pieces(st.Reasoning, n) {
		if err := emit(llm.Event{Kind: llm.EventReasoning, Text: p}); err != nil {
			return nil, err
		}
	}
	for _, p := range pieces(st.Text, n) {
		if err := emit(llm.Event{Kind: llm.EventText, Text: p}); err != nil {
			return nil, err
		}
	}
	for i, tc := range t.calls {
		// As the adapter does: a call is done once the next one starts,
		// when its arguments are a whole JSON value.
		if i > 0 {
			if prev := t.calls[i-1]; strings.TrimSpace(prev.Arguments) != "" && json.Valid([]byte(prev.Arguments)) {
				if err := emit(llm.Event{Kind: llm.EventToolCallDone, ToolCall: &prev}); err != nil {
					return nil, err
				}
			}
		}
		if err := emit(llm.Event{Kind: llm.EventToolCall, ToolCall: &tc}); err != nil {
			return nil, err
		}
	}
	resp := &llm.Response{
		Model:         model,
		Text:          st.Text,
		Reasoning:     st.Reasoning,
		Refusal:       st.Refusal,
		ToolCalls:     t.calls,
		Usage:         t.usage,
		UsageReported: !st.Quirks.NoUsage,
	}
	resp.FinishReason = finishReason(t.finishReason(), len(t.calls) > 0)
	for i := range resp.ToolCalls {
		if strings.TrimSpace(resp.ToolCalls[i].Arguments) == "" {
			resp.ToolCalls[i].Arguments = "{}"
		}
	}
	return resp, nil
}

// finishReason mirrors the adapter's normalisation of a wire finish reason.
func finishReason(raw string, hasCalls bool) llm.FinishReason {
	switch raw {
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	}
	if hasCalls {
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}

// statusError is the error the adapter returns for an HTTP error status.
func statusError(st Step) *llm.Error {
	e := defaultError(st.Status)
	if st.Error != nil {
		e = *st.Error
	}
	kind := llm.KindBadRequest
	switch {
	case strings.Contains(e.Code, "context_length") || strings.Contains(strings.ToLower(e.Message), "context length"):
		kind = llm.KindContextLength
	case st.Status == http.StatusUnauthorized || st.Status == http.StatusForbidden:
		kind = llm.KindAuth
	case st.Status == http.StatusTooManyRequests:
		kind = llm.KindRateLimit
	case st.Status >= 500:
		kind = llm.KindServer
	}
	out := &llm.Error{Kind: kind, StatusCode: st.Status, Message: e.Message, Attempts: 1}
	if secs, err := strconv.ParseFloat(string(st.RetryAfter), 64); err == nil {
		out.RetryAfter = secondsDuration(secs)
	}
	if e.Code != "" {
		out.Message = fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return out
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/messages"
)

// everythingSchema is a shortened copy of server-everything's
// trigger-elicitation-request schema.
const everythingSchema = `{"type":"object","properties":{
 "name":{"type":"string","title":"String"},
 "integer":{"type":"integer","minimum":1,"maximum":100,"default":42}
},"required":["name"]}`

// TestBusElicitor: a request is published with its schema, a bad answer
// is refused and leaves it pending, a good one reaches the server with
// defaults applied, and a request whose call ends is withdrawn.
func TestBusElicitor(t *testing.T) {
	bus := events.New("s", nil)
	ch := bus.Subscribe(t.Context(), 16, true)
	el := NewBusElicitor(bus, func() string { return "e1" })
	type answer struct {
		action  string
		content map[string]any
		err     error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := el.Elicit(t.Context(), Elicitation{Server: "srv", Message: "Who are you?", Schema: json.RawMessage(everythingSchema)})
		if err != nil {
			done <- answer{err: err}
			return
		}
		done <- answer{action: res.Action, content: res.Content}
	}()
	ev := next[messages.ElicitationRequested](t, ch)
	if ev.ID != "e1" || ev.Server != "srv" || ev.Mode != "form" || ev.Message != "Who are you?" || len(ev.Schema) == 0 {
		t.Fatalf("published %+v", ev)
	}
	if err := el.Answer("e1", ActionAccept, map[string]any{"integer": 500.0}); !errors.Is(err, ErrInvalidAnswer) {
		t.Fatalf("bad answer: %v, want ErrInvalidAnswer", err)
	}
	if len(el.Pending()) != 1 {
		t.Fatalf("a refused answer must leave the request pending")
	}
	if err := el.Answer("e1", ActionAccept, map[string]any{"name": "Ada"}); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || got.action != ActionAccept || got.content["name"] != "Ada" || got.content["integer"] != int64(42) {
		t.Fatalf("server got %+v", got)
	}
	if r := next[messages.ElicitationResolved](t, ch); r.ID != "e1" || r.Action != ActionAccept {
		t.Fatalf("resolved %+v", r)
	}
	if err := el.Answer("e1", ActionDecline, nil); !errors.Is(err, ErrUnknownElicitation) {
		t.Fatalf("second answer: %v", err)
	}

	// A call that ends withdraws its request.
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		_, err := el.Elicit(ctx, Elicitation{Server: "srv", URL: "https://example.com/login"})
		done <- answer{err: err}
	}()
	if ev := next[messages.ElicitationRequested](t, ch); ev.Mode != "url" || ev.URL != "https://example.com/login" {
		t.Fatalf("url mode: %+v", ev)
	}
	cancel()
	if got := <-done; got.err == nil {
		t.Fatal("a withdrawn request returned no error")
	}
	if r := next[messages.ElicitationResolved](t, ch); r.Action != ActionCancel {
		t.Fatalf("withdrawn: %+v", r)
	}

	// A URL that is not a web page is declined without asking.
	res, err := el.Elicit(t.Context(), Elicitation{Server: "srv", URL: "file:///etc/passwd"})
	if err != nil || res.Action != ActionDecline {
		t.Fatalf("file URL: %+v %v", res, err)
	}
	if len(el.Pending()) != 0 {
		t.Fatal("the file URL was asked")
	}
}

func next[T any](t *testing.T, ch <-chan messages.Envelope) T {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case env := <-ch:
			if ev, ok := env.Event.(T); ok {
				return ev
			}
		case <-timeout:
			var zero T
			t.Fatalf("no %T published", zero)
			return zero
		}
	}
}

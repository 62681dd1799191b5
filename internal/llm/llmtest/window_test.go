package llmtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// WithContextWindow refuses a request over the window the way OpenAI does
// (400, context_length_exceeded), before it takes a step, records it, and
// leaves smaller requests and other models alone.
func TestContextWindow(t *testing.T) {
	script := llmtest.NewScript().Add("a", llmtest.Reply("small ok"), llmtest.Reply("other model ok"))
	srv := llmtest.NewServer(t, script, llmtest.WithContextWindow(100, "m"))
	c := adapter(t, srv)

	if got := ask(t, c, "a", user("short")); got != "small ok" {
		t.Fatalf("a request within the window = %q", got)
	}
	big := user(strings.Repeat("x", 4*200)) // about 200 tokens
	_, err := c.Stream(t.Context(), llm.Request{Model: "m", Agent: "a", Messages: []llm.Message{big}}, nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindContextLength || le.StatusCode != http.StatusBadRequest || le.Attempts != 1 {
		t.Fatalf("a request over the window: err = %v, want a context_length error (HTTP 400) after one attempt", err)
	}
	// Another model has no window: the next step serves it.
	r, err := c.Stream(t.Context(), llm.Request{Model: "other", Agent: "a", Messages: []llm.Message{big}}, nil)
	if err != nil || r.Text != "other model ok" {
		t.Fatalf("a model without a window: %v, %+v", err, r)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests recorded, want 3", len(reqs))
	}
	if reqs[1].Step != -1 || !reqs[1].OverWindow || reqs[1].Tokens <= 100 {
		t.Errorf("refused request recorded as %+v", struct {
			Step       int
			OverWindow bool
			Tokens     int64
		}{reqs[1].Step, reqs[1].OverWindow, reqs[1].Tokens})
	}
	if reqs[0].OverWindow || reqs[0].Tokens == 0 || reqs[0].Tokens > 100 || reqs[2].OverWindow {
		t.Errorf("requests within their windows recorded as over, or without their size: %+v / %+v", reqs[0].Tokens, reqs[2].OverWindow)
	}
	if n := srv.OverWindow(); n != 1 {
		t.Errorf("OverWindow() = %d, want 1", n)
	}
}

// The refusal's body has OpenAI's shape: an error object whose type, code
// and param a client can classify by.
func TestContextWindowErrorShape(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("a", llmtest.Reply("unused")), llmtest.WithContextWindow(10))
	body, _ := json.Marshal(map[string]any{"model": "any", "stream": true,
		"messages": []map[string]string{{"role": "user", "content": strings.Repeat("y", 400)}}})
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var got struct {
		Error struct {
			Message, Type, Code, Param string
		}
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("body %s: %v", raw, err)
	}
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" ||
		got.Error.Type != "invalid_request_error" || got.Error.Code != "context_length_exceeded" || got.Error.Param != "messages" ||
		!strings.Contains(got.Error.Message, "context window of 10 tokens") {
		t.Errorf("status %d, content type %q, body %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	if u := srv.Unused(); len(u) != 1 {
		t.Errorf("the refused request consumed a step: unused %v", u)
	}
}

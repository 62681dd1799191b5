package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// adapter is the real client, without retries, so that each request
// consumes exactly one step.
func adapter(t *testing.T, s *llmtest.Server) *llm.OpenAI {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return llm.NewOpenAI(llm.OpenAIOptions{BaseURL: s.URL(), MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})
}

func ask(t *testing.T, c llm.Client, agent string, msgs ...llm.Message) string {
	t.Helper()
	r, err := c.Stream(t.Context(), llm.Request{Model: "m", Agent: agent, Messages: msgs}, nil)
	if err != nil {
		t.Fatalf("Stream(%s): %v", agent, err)
	}
	if len(r.ToolCalls) > 0 {
		return "call " + r.ToolCalls[0].Name + " " + r.ToolCalls[0].Arguments
	}
	return r.Text
}

func user(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Content: s} }

func TestStepsInOrderPerAgent(t *testing.T) {
	script := llmtest.NewScript().
		Add("orchestrator", llmtest.Reply("o1"), llmtest.Calls(llmtest.Call("LS", map[string]string{"path": "."})), llmtest.Reply("o3")).
		Add("code", llmtest.Reply("c1")).
		Add(llmtest.DefaultAgent, llmtest.Reply("d1"), llmtest.Reply("d2"))
	srv := llmtest.NewServer(t, script)
	c := adapter(t, srv)
	got := []string{
		ask(t, c, "orchestrator", user("a")),
		ask(t, c, "code", user("b")),
		ask(t, c, "orchestrator", user("c")),
		ask(t, c, "", user("d")),       // no header: default
		ask(t, c, "review", user("e")), // no steps for review: default
		ask(t, c, "orchestrator", user("f")),
	}
	want := []string{"o1", "c1", `call LS {"path":"."}`, "d1", "d2", "o3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if u := srv.Unused(); len(u) != 0 {
		t.Errorf("unused steps: %v", u)
	}
	var agents, pools []string
	for _, r := range srv.Requests() {
		agents, pools = append(agents, r.Agent), append(pools, r.Pool)
	}
	if diff := cmp.Diff([]string{"orchestrator", "code", "orchestrator", "default", "review", "orchestrator"}, agents); diff != "" {
		t.Errorf("recorded agents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"orchestrator", "code", "orchestrator", "default", "default", "orchestrator"}, pools); diff != "" {
		t.Errorf("recorded pools (-want +got):\n%s", diff)
	}
	if n := len(srv.RequestsFor("orchestrator")); n != 3 {
		t.Errorf("RequestsFor(orchestrator) = %d, want 3", n)
	}
}

func TestWhen(t *testing.T) {
	script := llmtest.NewScript().Add("a",
		llmtest.Step{When: "go.mod", Text: "saw go.mod"},
		llmtest.Step{When: "tests pass", Text: "saw passing tests"},
		llmtest.Reply("anything"),
	)
	srv := llmtest.NewServer(t, script)
	c := adapter(t, srv)
	// The step without When is the first one matching a plain request.
	if got := ask(t, c, "a", user("hello")); got != "anything" {
		t.Errorf("plain request got %q", got)
	}
	// A tool result in the last turn matches even if it is not last.
	turn := []llm.Message{
		user("check"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1", Name: "Bash", Arguments: "{}"}, {ID: "2", Name: "LS", Arguments: "{}"}}},
		{Role: llm.RoleTool, ToolCallID: "1", Content: "ok: tests pass"},
		{Role: llm.RoleTool, ToolCallID: "2", Content: "README.md"},
	}
	if got := ask(t, c, "a", turn...); got != "saw passing tests" {
		t.Errorf("tool result in last turn got %q", got)
	}
	// An older turn does not count.
	old := []llm.Message{user("x"), {Role: llm.RoleAssistant, Content: "go.mod is here"}, user("and now?")}
	if _, err := c.Stream(t.Context(), llm.Request{Model: "m", Agent: "a", Messages: old}, nil); err == nil {
		t.Error("a match in an older turn must not select the step")
	}
	if got := ask(t, c, "a", user("read go.mod")); got != "saw go.mod" {
		t.Errorf("last message match got %q", got)
	}
}

func TestExhaustedScript(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("code", llmtest.Reply("only one")))
	c := adapter(t, srv)
	ask(t, c, "code", user("first"))
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"please fix the parser"}]}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
	req.Header.Set("X-Odin-Agent", "code")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", resp.StatusCode)
	}
	for _, want := range []string{`agent \"code\"`, "please fix the parser", "script exhausted"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("body %s does not mention %s", b, want)
		}
	}
	// Through the adapter the same explanation reaches the test.
	_, err = c.Stream(t.Context(), llm.Request{Model: "m", Agent: "code", Messages: []llm.Message{user("again")}}, nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.KindServer || !strings.Contains(e.Message, `"again"`) {
		t.Errorf("err = %v, want a server error quoting the last message", err)
	}
}

func TestHoldAndRelease(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("a", llmtest.Step{Text: "released", Hold: "gate"}))
	c := adapter(t, srv)
	done := make(chan string, 1)
	go func() {
		r, err := c.Stream(context.Background(), llm.Request{Model: "m", Agent: "a", Messages: []llm.Message{user("x")}}, nil)
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- r.Text
	}()
	if err := srv.WaitHeld(t.Context(), "gate"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		t.Fatalf("response %q arrived before Release", got)
	default:
	}
	srv.Release("gate")
	if got := <-done; got != "released" {
		t.Errorf("got %q", got)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := srv.WaitHeld(ctx, "never"); err == nil || !strings.Contains(err.Error(), "never") {
		t.Errorf("WaitHeld on an unused gate: err = %v", err)
	}
}

// waitFor polls cond for a bounded time; the condition is what is tested.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestMaxInFlight(t *testing.T) {
	const n = 3
	script := llmtest.NewScript()
	for range n {
		script.Add("a", llmtest.Step{Text: "x", Hold: "all"})
	}
	script.Add("b", llmtest.Reply("alone"))
	srv := llmtest.NewServer(t, script)
	c := adapter(t, srv)
	ask(t, c, "b", user("first, alone"))
	waitFor(t, "the first request's handler to return", func() bool { return srv.InFlight() == 0 })

	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := c.Stream(context.Background(), llm.Request{Model: "m", Agent: "a", Messages: []llm.Message{user("x")}}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, "all requests to arrive", func() bool { return len(srv.RequestsFor("a")) == n })
	srv.Release("all")
	wg.Wait()
	if got := srv.MaxInFlight(); got != n {
		t.Errorf("MaxInFlight = %d, want %d", got, n)
	}
	concurrent := 0
	for _, r := range srv.RequestsFor("a") {
		if r.Concurrent {
			concurrent++
		}
	}
	if srv.RequestsFor("b")[0].Concurrent || concurrent != n-1 {
		t.Errorf("concurrent flags: b=%v, a has %d, want false and %d", srv.RequestsFor("b")[0].Concurrent, concurrent, n-1)
	}
}

func TestCloseEndsHeldResponses(t *testing.T) {
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("a", llmtest.Step{Text: "x", Hold: "forever"}))
	if err != nil {
		t.Fatal(err)
	}
	c := adapter(t, srv)
	done := make(chan error, 1)
	go func() {
		_, err := c.Stream(context.Background(), llm.Request{Model: "m", Agent: "a", Messages: []llm.Message{user("x")}}, nil)
		done <- err
	}()
	if err := srv.WaitHeld(t.Context(), "forever"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-done; err == nil {
		t.Error("a response held when the server closed must fail")
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestNonStreamingAndOtherRoutes(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add(llmtest.DefaultAgent,
		llmtest.Step{Text: "plain <json> & more", Reasoning: "r", Usage: &llm.Usage{PromptTokens: 3, CompletionTokens: 4}},
		llmtest.Calls(llmtest.Call("LS", map[string]string{"path": "."})),
	))
	post := func(body string) (int, map[string]any) {
		resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	status, v := post(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	want := map[string]any{
		"index": float64(0), "finish_reason": "stop",
		"message": map[string]any{"role": "assistant", "content": "plain <json> & more", "reasoning_content": "r"},
	}
	if diff := cmp.Diff(want, v["choices"].([]any)[0]); status != 200 || diff != "" {
		t.Errorf("status %d, choice (-want +got):\n%s", status, diff)
	}
	if diff := cmp.Diff(map[string]any{"prompt_tokens": float64(3), "completion_tokens": float64(4), "total_tokens": float64(7)}, v["usage"]); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	_, v = post(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if c := v["choices"].([]any)[0].(map[string]any); c["finish_reason"] != "tool_calls" {
		t.Errorf("tool call choice = %v", c)
	}
	if status, v := post(`{not json`); status != 400 || !strings.Contains(v["error"].(map[string]any)["message"].(string), "not a chat request") {
		t.Errorf("bad body: status %d body %v", status, v)
	}

	resp, err := http.Get(srv.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if len(models.Data) != 1 || models.Data[0].ID != llmtest.DefaultModel {
		t.Errorf("models = %+v", models)
	}
	resp, err = http.Get(srv.URL() + "/embeddings")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown route status = %d", resp.StatusCode)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("recorded %d chat requests, want 3", n)
	}
}

func TestServeRejectsBadScripts(t *testing.T) {
	if _, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("a", llmtest.Reply("{{missing}}"))); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("undefined var: err = %v", err)
	}
	if _, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("a", llmtest.Step{Status: 302})); err == nil {
		t.Error("status 302: want an error")
	}
	if _, err := llmtest.Serve("256.0.0.1:0", llmtest.NewScript()); err == nil {
		t.Error("bad address: want an error")
	}
}

func TestVarsAndLogging(t *testing.T) {
	var log strings.Builder
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return log.Write(p) })
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("a", llmtest.Step{Text: "root={{root}}"}),
		llmtest.WithVars(map[string]string{"root": "/srv/demo"}), llmtest.WithLog(w))
	if got := ask(t, adapter(t, srv), "a", user("x")); got != "root=/srv/demo" {
		t.Errorf("got %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(log.String(), "a: step a[0]") {
		t.Errorf("log = %q", log.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestNonStreamingFaults(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add(llmtest.DefaultAgent,
		llmtest.Step{Text: "x", ErrorMidstream: true}, llmtest.Step{Text: "x", CutAfter: 1}))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	resp, err := c.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("error_midstream without streaming: status %d, want 500", resp.StatusCode)
	}
	if resp, err := c.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body)); err == nil {
		resp.Body.Close()
		t.Errorf("cut_after without streaming: got status %d, want the connection dropped", resp.StatusCode)
	}
}

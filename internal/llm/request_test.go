package llm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

func TestRequestShape(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("code", llmtest.Reply("done")))
	c, _ := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) {
		o.Headers = map[string]string{"X-Title": "odin"}
	})
	temp := 0.25
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file"}},"required":["path"]}`)
	req := llm.Request{
		Model:       "test-model",
		Agent:       "code",
		MaxTokens:   512,
		Temperature: &temp,
		Tools: []llm.ToolDef{
			{Name: "ReadFile", Description: "Reads a file.", Parameters: schema},
			{Name: "Now", Description: "Tells the time."},
		},
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are Odin."},
			{Role: llm.RoleUser, Content: "Read a.go and b.go"},
			{Role: llm.RoleAssistant, Reasoning: "never sent back", ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "ReadFile", Arguments: `{"path":"a.go"}`},
				{ID: "c2", Name: "ReadFile", Arguments: `{"path": "b.go",`},
				{ID: "c3", Name: "Now", Arguments: ``},
			}},
			{Role: llm.RoleTool, ToolCallID: "c1", Name: "ReadFile", Content: "package a"},
			{Role: llm.RoleTool, ToolCallID: "c2", Name: "ReadFile", Content: "error: arguments are not valid JSON"},
			{Role: llm.RoleTool, ToolCallID: "c3", Name: "Now", Content: "noon"},
			{Role: llm.RoleAssistant, Content: "Both read."},
			{Role: llm.RoleUser, Content: "Thanks"},
		},
	}
	if _, err := c.Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.RequestsFor("code")
	if len(reqs) != 1 {
		t.Fatalf("requests for code = %d, want 1", len(reqs))
	}
	got := reqs[0]
	if h := got.Header.Get("X-Odin-Agent"); h != "code" {
		t.Errorf("X-Odin-Agent = %q", h)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer test-key" {
		t.Errorf("Authorization = %q", h)
	}
	if h := got.Header.Get("X-Title"); h != "odin" {
		t.Errorf("extra header X-Title = %q", h)
	}
	b := got.Body
	if !b.Stream || b.StreamOptions == nil || !b.StreamOptions.IncludeUsage {
		t.Errorf("stream = %v, stream_options = %+v; want streaming with include_usage", b.Stream, b.StreamOptions)
	}
	if b.Model != "test-model" || b.Temperature == nil || *b.Temperature != temp || b.MaxTokens == nil || *b.MaxTokens != 512 || b.MaxCompletionTokens != nil {
		t.Errorf("model %q temperature %v max_tokens %v max_completion_tokens %v", b.Model, b.Temperature, b.MaxTokens, b.MaxCompletionTokens)
	}
	if diff := cmp.Diff([]string{"ReadFile", "Now"}, b.ToolNames()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	var gotSchema, wantSchema any
	_ = json.Unmarshal(b.Tools[0].Function.Parameters, &gotSchema)
	_ = json.Unmarshal(schema, &wantSchema)
	if diff := cmp.Diff(wantSchema, gotSchema); diff != "" || b.Tools[0].Type != "function" || b.Tools[0].Function.Description != "Reads a file." {
		t.Errorf("tool 0 = %+v; schema (-want +got):\n%s", b.Tools[0], diff)
	}
	if p := string(b.Tools[1].Function.Parameters); !strings.Contains(p, `"type":"object"`) {
		t.Errorf("a tool without parameters must still get an object schema, got %s", p)
	}

	want := []llm.Message{
		{Role: llm.RoleSystem, Content: "You are Odin."},
		{Role: llm.RoleUser, Content: "Read a.go and b.go"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "ReadFile", Arguments: `{"path":"a.go"}`},
			// Invalid or empty arguments go back as {}: template-based
			// servers reject the request otherwise.
			{ID: "c2", Name: "ReadFile", Arguments: `{}`},
			{ID: "c3", Name: "Now", Arguments: `{}`},
		}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "package a"},
		{Role: llm.RoleTool, ToolCallID: "c2", Content: "error: arguments are not valid JSON"},
		{Role: llm.RoleTool, ToolCallID: "c3", Content: "noon"},
		{Role: llm.RoleAssistant, Content: "Both read."},
		{Role: llm.RoleUser, Content: "Thanks"},
	}
	if diff := cmp.Diff(want, b.LLMMessages()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	// Strict providers reject "content": "" beside tool calls.
	if raw := b.Messages[2].Content; len(raw) != 0 && string(raw) != "null" {
		t.Errorf("assistant message with tool calls has content %s, want none", raw)
	}
	if strings.Contains(string(got.Raw), "never sent back") {
		t.Error("reasoning was sent back to the provider")
	}
}

func TestRequestMaxTokensField(t *testing.T) {
	tests := []struct {
		name      string
		param     string
		wantField string
	}{
		{"default for compatible servers", "", "max_tokens"},
		{"explicit max_completion_tokens", "max_completion_tokens", "max_completion_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Reply("ok")))
			c, _ := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) { o.MaxTokensParam = tt.param })
			req := userRequest("hi")
			req.MaxTokens = 99
			if _, err := c.Stream(t.Context(), req, nil); err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			if err := json.Unmarshal(srv.Requests()[0].Raw, &body); err != nil {
				t.Fatal(err)
			}
			if body[tt.wantField] != float64(99) {
				t.Errorf("body = %v, want %s: 99", body, tt.wantField)
			}
		})
	}
}

func TestNoKeyNoAuthorization(t *testing.T) {
	// openai-go's own constructor would pick this up and send it to any
	// server; Odin must only send the key it was given.
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Reply("ok")))
	c, _ := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) { o.APIKey = "" })
	if _, err := c.Stream(t.Context(), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if h := got.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none", h)
	}
	if got.Agent != llmtest.DefaultAgent || got.Header.Get("X-Odin-Agent") != "" {
		t.Errorf("agent = %q, header %q: a request without Agent sends no header", got.Agent, got.Header.Get("X-Odin-Agent"))
	}
}

func TestBadRequestsFailBeforeSending(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"no model", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, "no model"},
		{"no messages", llm.Request{Model: "m"}, "no messages"},
		{"unknown role", llm.Request{Model: "m", Messages: []llm.Message{{Role: "wizard", Content: "x"}}}, `unknown role "wizard"`},
		{"tool message without id", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleTool, Content: "x"}}}, "tool_call_id"},
		{"tool schema not an object", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}},
			Tools: []llm.ToolDef{{Name: "T", Parameters: json.RawMessage(`[1]`)}}}, `tool "T"`},
	}
	srv := llmtest.NewServer(t, llmtest.NewScript())
	c, _ := newAdapter(t, srv.URL())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Stream(t.Context(), tt.req, nil)
			e := asError(t, err)
			if e.Kind != llm.KindBadRequest || !strings.Contains(e.Error(), tt.want) {
				t.Errorf("err = %v (kind %s), want bad_request mentioning %q", e, e.Kind, tt.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestEstimates(t *testing.T) {
	tests := []struct {
		s    string
		want int64
	}{
		{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {"日本語", 3}, {strings.Repeat("x", 400), 100},
	}
	for _, tt := range tests {
		if got := llm.EstimateTokens(tt.s); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: "abcdefgh"}, // 4 + 2
		{Role: llm.RoleAssistant, Reasoning: "not counted", ToolCalls: []llm.ToolCall{{Name: "LS", Arguments: `{"p":1}`}}}, // 4 + 1 + 2
	}
	if got := llm.EstimateMessages(msgs); got != 13 {
		t.Errorf("EstimateMessages = %d, want 13", got)
	}
}

// Tool definitions are encoded once and reused; a tool whose description
// or schema changes between requests (an MCP server's tools/list_changed,
// the agent tool of another mode) must go out as it is now, never as the
// cached encoding of its earlier self.
func TestChangedToolDefinitionIsSentAsItIsNow(t *testing.T) {
	script := llmtest.NewScript()
	const n = 3 // variants of one name, all kept by the cache
	for range 2 * n {
		script.Add("default", llmtest.Reply("ok"))
	}
	srv := llmtest.NewServer(t, script)
	c, _ := newAdapter(t, srv.URL())
	var want []string
	for round := range 2 {
		for i := range n {
			desc := fmt.Sprintf("version %d", i)
			schema := fmt.Sprintf(`{"type":"object","properties":{"v%d":{"type":"string"}}}`, i)
			if round == 1 {
				// Same description, other schema: only the schema tells them apart.
				schema = fmt.Sprintf(`{"type":"object","properties":{"w%d":{"type":"string"}}}`, i)
			}
			req := userRequest("hi")
			req.Tools = []llm.ToolDef{{Name: "T", Description: desc, Parameters: json.RawMessage(schema)}}
			if _, err := c.Stream(t.Context(), req, nil); err != nil {
				t.Fatal(err)
			}
			want = append(want, desc+" "+schema)
		}
	}
	var got []string
	for _, r := range srv.Requests() {
		tool := r.Body.Tools[0].Function
		got = append(got, tool.Description+" "+string(tool.Parameters))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools sent (-want +got):\n%s", diff)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/odin-code/odin/messages"
)

func claudeLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// TestClaudeStreamSpecialistsAndGates: a specialist's messages hang under
// the agent call that started it; one the gates started, under its task
// id; the answer the gates wrote follows the interim text; usage per
// model adds the specialists' up.
func TestClaudeStreamSpecialistsAndGates(t *testing.T) {
	var buf bytes.Buffer
	c := newClaudeStream(&buf)
	c.init(messages.Init{SessionID: "s1", Model: "main-m", Cwd: "/r"}, "")
	orch := messages.Origin{Agent: "orchestrator"}
	code := messages.Origin{Agent: "code", TaskID: "t1"}
	review := messages.Origin{Agent: "review", TaskID: "t2"}
	for _, ev := range []messages.Event{
		messages.TextDelta{Origin: orch, Text: "I'll delegate."},
		messages.ToolStarted{Origin: orch, CallID: "call_a", Name: "agent", Input: `{"agent":"code","description":"fix the bug","prompt":"x"}`},
		messages.AgentStarted{TaskID: "t1", Agent: "code", Description: "fix the bug", Model: "code-m"},
		messages.ToolStarted{Origin: code, CallID: "call_c", Name: "EditFile", Input: `{"file_path":"/r/a.go"}`},
		messages.ToolFinished{Origin: code, CallID: "call_c", Name: "EditFile", Output: "edited"},
		messages.UsageUpdated{Origin: code, Model: "code-m", Usage: messages.Usage{PromptTokens: 100, CachedTokens: 40, CompletionTokens: 10, Cost: 0.5}},
		messages.ToolFinished{Origin: orch, CallID: "call_a", Name: "agent", Output: "done"},
		messages.UsageUpdated{Origin: orch, Model: "main-m", Usage: messages.Usage{PromptTokens: 50, CompletionTokens: 5, Cost: 0.25}},
		messages.AgentStarted{TaskID: "t2", Agent: "review", Description: "review", Model: "code-m"},
		messages.ToolStarted{Origin: review, CallID: "call_r", Name: "GitDiff", Input: `{}`},
		messages.ToolFinished{Origin: review, CallID: "call_r", Name: "GitDiff", Output: "diff", Denied: true},
		messages.TextDelta{Origin: orch, Text: "Fixed, I think."},
	} {
		c.event(messages.Envelope{Session: "s1", Event: ev})
	}
	c.finish(messages.TurnResult{Status: messages.TurnDone, Answer: "Fixed; review passed.", Interim: "Fixed, I think.",
		Usage: messages.Usage{PromptTokens: 150, CachedTokens: 40, CompletionTokens: 15, Cost: 0.75}}, "s1")
	lines := claudeLines(t, buf.Bytes())
	var types []string
	parents := map[string]any{}
	for _, l := range lines {
		types = append(types, l["type"].(string))
		if msg, ok := l["message"].(map[string]any); ok {
			for _, b := range msg["content"].([]any) {
				block := b.(map[string]any)
				id, _ := block["id"].(string)
				if id == "" {
					id, _ = block["tool_use_id"].(string)
				}
				if id != "" {
					parents[l["type"].(string)+":"+id] = l["parent_tool_use_id"]
				}
			}
		}
	}
	if got := strings.Join(types, " "); got != "system assistant assistant user user assistant user assistant assistant result" {
		t.Fatalf("line types: %s", got)
	}
	if parents["assistant:call_a"] != nil || parents["assistant:call_c"] != "call_a" || parents["user:call_c"] != "call_a" {
		t.Errorf("code's messages: %v", parents)
	}
	if parents["assistant:call_r"] != "t2" {
		t.Errorf("the gates' review hangs under %v, want its task id", parents["assistant:call_r"])
	}
	texts := []string{}
	for _, l := range lines[7:9] {
		texts = append(texts, l["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string))
	}
	if strings.Join(texts, "|") != "Fixed, I think.|Fixed; review passed." {
		t.Errorf("final texts: %v", texts)
	}
	res := lines[len(lines)-1]
	if res["result"] != "Fixed; review passed." || res["num_turns"] != 1.0 {
		t.Errorf("result: %v", res)
	}
	mu := res["modelUsage"].(map[string]any)
	if cm := mu["code-m"].(map[string]any); cm["inputTokens"] != 60.0 || cm["cacheReadInputTokens"] != 40.0 || cm["costUSD"] != 0.5 {
		t.Errorf("code-m usage: %v", cm)
	}
	if u := res["usage"].(map[string]any); u["input_tokens"] != 110.0 || u["cache_read_input_tokens"] != 40.0 || u["prompt_tokens"] != 150.0 {
		t.Errorf("usage: %v", u)
	}
	if d := res["permission_denials"].([]any); len(d) != 1 || d[0].(map[string]any)["tool_use_id"] != "call_r" {
		t.Errorf("denials: %v", d)
	}
}

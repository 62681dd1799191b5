package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// claudeConsumer is a small reader of Claude Code's
// `--output-format stream-json` stream, written from that format's
// documentation and from nothing of Odin's: the kind of script a team
// runs against `claude -p`. It collects the text the main agent said, its
// tool calls and their results, and the final result.
type claudeConsumer struct {
	sessionID   string
	texts       []string
	toolUses    []consumerToolUse
	toolResults map[string]consumerToolResult
	subagent    int // messages with a parent_tool_use_id
	results     []consumerResult
	order       []string // line types in order
}

type consumerToolUse struct {
	ID, Name string
	Input    map[string]any
}

type consumerToolResult struct {
	Content string
	IsError bool
}

type consumerResult struct {
	Subtype      string
	IsError      bool
	Result       string
	SessionID    string
	NumTurns     int
	DurationMS   float64
	TotalCostUSD *float64
	InputTokens  float64
	OutputTokens float64
}

func consumeClaudeStream(t *testing.T, out []byte) *claudeConsumer {
	t.Helper()
	c := &claudeConsumer{toolResults: map[string]consumerToolResult{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("a stream-json line is not JSON: %v\n%s", err, sc.Text())
		}
		typ, _ := line["type"].(string)
		c.order = append(c.order, typ)
		switch typ {
		case "system":
			if line["subtype"] == "init" {
				c.sessionID, _ = line["session_id"].(string)
			}
		case "assistant", "user":
			if line["parent_tool_use_id"] != nil {
				c.subagent++
				continue
			}
			msg, _ := line["message"].(map[string]any)
			blocks, _ := msg["content"].([]any)
			for _, b := range blocks {
				block, _ := b.(map[string]any)
				switch block["type"] {
				case "text":
					c.texts = append(c.texts, block["text"].(string))
				case "tool_use":
					in, _ := block["input"].(map[string]any)
					c.toolUses = append(c.toolUses, consumerToolUse{ID: block["id"].(string), Name: block["name"].(string), Input: in})
				case "tool_result":
					content, _ := block["content"].(string)
					isErr, _ := block["is_error"].(bool)
					c.toolResults[block["tool_use_id"].(string)] = consumerToolResult{Content: content, IsError: isErr}
				}
			}
		case "result":
			r := consumerResult{}
			r.Subtype, _ = line["subtype"].(string)
			r.IsError, _ = line["is_error"].(bool)
			r.Result, _ = line["result"].(string)
			r.SessionID, _ = line["session_id"].(string)
			n, _ := line["num_turns"].(float64)
			r.NumTurns = int(n)
			r.DurationMS, _ = line["duration_ms"].(float64)
			if cost, ok := line["total_cost_usd"].(float64); ok {
				r.TotalCostUSD = &cost
			}
			usage, _ := line["usage"].(map[string]any)
			r.InputTokens, _ = usage["input_tokens"].(float64)
			r.OutputTokens, _ = usage["output_tokens"].(float64)
			c.results = append(c.results, r)
		}
	}
	return c
}

// TestClaudeStreamConsumer: a consumer written for Claude Code's stream
// reads Odin's unchanged — text, tool calls, tool results, and the final
// result with usage and cost — for `odin -p` given Claude's own flags, and
// the lines come in Claude's order (init first, result last).
func TestClaudeStreamConsumer(t *testing.T) {
	env, root := acpEnv(t)
	writeFile(t, root, "main.go", "package main\n\nfunc main() {}\n")
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "what is in main.go", Text: "Let me look.", ToolCalls: []llmtest.ToolCall{llmtest.Call("ReadFile", map[string]any{"file_path": root + "/main.go"})}},
		llmtest.Step{When: "package main", Text: "It is a Go main package with an empty main."},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	cmd := exec.Command(filepath.Join(binDir, "odin"), "-p", "what is in main.go?", "--output-format", "stream-json", "--verbose",
		"--permission-mode", "default", "--allowedTools", "Read,Bash(git diff:*)")
	cmd.Env, cmd.Dir = env, root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("odin -p: %v\n%s", err, stderr.String())
	}
	c := consumeClaudeStream(t, out)
	if len(c.order) < 4 || c.order[0] != "system" || c.order[len(c.order)-1] != "result" {
		t.Fatalf("line order %v: want system first and result last", c.order)
	}
	if c.sessionID == "" {
		t.Error("init carried no session_id")
	}
	if len(c.toolUses) != 1 || c.toolUses[0].Name != "ReadFile" || c.toolUses[0].Input["file_path"] != root+"/main.go" {
		t.Fatalf("tool calls: %+v", c.toolUses)
	}
	res, ok := c.toolResults[c.toolUses[0].ID]
	if !ok || res.IsError || !strings.Contains(res.Content, "package main") {
		t.Errorf("tool result of %s: %+v (have %v)", c.toolUses[0].ID, res, c.toolResults)
	}
	if got := strings.Join(c.texts, "|"); got != "Let me look.|It is a Go main package with an empty main." {
		t.Errorf("texts: %q", got)
	}
	if len(c.results) != 1 {
		t.Fatalf("%d results, want 1", len(c.results))
	}
	r := c.results[0]
	if r.Subtype != "success" || r.IsError || r.Result != "It is a Go main package with an empty main." || r.SessionID != c.sessionID {
		t.Errorf("result: %+v", r)
	}
	if r.NumTurns != 2 || r.InputTokens <= 0 || r.OutputTokens <= 0 {
		t.Errorf("result counts: %+v", r)
	}
	if r.TotalCostUSD == nil || *r.TotalCostUSD <= 0 {
		t.Errorf("total_cost_usd: %v, want the priced cost", r.TotalCostUSD)
	}
}

// TestClaudeStreamInput: --input-format stream-json takes Claude's user
// messages as JSON lines on stdin and answers each in turn, in one
// session; a malformed line is skipped with a notice, never sent.
func TestClaudeStreamInput(t *testing.T) {
	env, root := acpEnv(t)
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "first question", Text: "First answer."},
		llmtest.Step{When: "second question", Text: "Second answer."},
		llmtest.Step{When: "third question", Text: "Third answer."},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	stdin := strings.Join([]string{
		`{"type":"user","message":{"role":"user","content":"first question"}}`,
		`not json at all`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second question"}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"third question"}]}}`,
	}, "\n") + "\n"
	cmd := exec.Command(filepath.Join(binDir, "odin"), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	cmd.Env, cmd.Dir = env, root
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("odin -p --input-format stream-json: %v\n%s", err, stderr.String())
	}
	c := consumeClaudeStream(t, out)
	var answers []string
	sessions := map[string]bool{}
	for _, r := range c.results {
		answers = append(answers, r.Result)
		sessions[r.SessionID] = true
	}
	if got := strings.Join(answers, "|"); got != "First answer.|Second answer.|Third answer." {
		t.Errorf("answers %q, want three in order", got)
	}
	if len(sessions) != 1 {
		t.Errorf("results from %d sessions, want one: %v", len(sessions), sessions)
	}
	if !strings.Contains(stderr.String(), "line 2 skipped") {
		t.Errorf("the malformed line was not reported:\n%s", stderr.String())
	}
	// One session: the third request carries the first two exchanges.
	reqs := srv.RequestsFor("orchestrator")
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	last := string(reqs[2].Raw)
	for _, want := range []string{"first question", "First answer.", "second question", "Second answer."} {
		if !strings.Contains(last, want) {
			t.Errorf("the third request lacks %q: one session should carry the history", want)
		}
	}
	if strings.Contains(last, "not json") {
		t.Error("the malformed line reached the model")
	}
}

// claudeShapes are the fields each line type of Claude Code's stream
// carries and their JSON types, as its documentation gives them
// ("null|string": either). Written from the format, not from Odin's code.
var claudeShapes = map[string]map[string]string{
	"system": {"type": "string", "subtype": "string", "session_id": "string", "cwd": "string", "model": "string",
		"tools": "array", "mcp_servers": "array", "permissionMode": "string", "slash_commands": "array",
		"apiKeySource": "string", "uuid": "string"},
	"assistant": {"type": "string", "message": "object", "message.id": "string", "message.type": "string",
		"message.role": "string", "message.model": "string", "message.content": "array", "message.usage": "object",
		"parent_tool_use_id": "null|string", "session_id": "string", "uuid": "string"},
	"user": {"type": "string", "message": "object", "message.role": "string", "message.content": "array",
		"parent_tool_use_id": "null|string", "session_id": "string", "uuid": "string"},
	"result": {"type": "string", "subtype": "string", "is_error": "bool", "duration_ms": "number",
		"duration_api_ms": "number", "num_turns": "number", "result": "string", "session_id": "string",
		"total_cost_usd": "null|number", "usage": "object", "usage.input_tokens": "number",
		"usage.output_tokens": "number", "usage.cache_read_input_tokens": "number",
		"usage.cache_creation_input_tokens": "number", "modelUsage": "object", "permission_denials": "array", "uuid": "string"},
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

// TestClaudeStreamShapes: every line of a two-turn stream has the fields
// and types of its Claude type, the types come in Claude's order (one
// init, then per turn messages closed by one result), and every content
// block is one of Claude's.
func TestClaudeStreamShapes(t *testing.T) {
	env, root := acpEnv(t)
	writeFile(t, root, "main.go", "package main\n")
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "read main.go", ToolCalls: []llmtest.ToolCall{llmtest.Call("ReadFile", map[string]any{"file_path": root + "/main.go"})}},
		llmtest.Step{When: "package main", Text: "Read it."},
		llmtest.Step{When: "and now", Text: "Done too."},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cmd := exec.Command(filepath.Join(binDir, "odin"), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	cmd.Env, cmd.Dir = append(env, "OPENAI_BASE_URL="+srv.URL()), root
	cmd.Stdin = strings.NewReader(`{"type":"user","message":{"role":"user","content":"read main.go"}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":"and now?"}}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, raw := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var line map[string]any
		if err := json.Unmarshal(raw, &line); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		typ, _ := line["type"].(string)
		order = append(order, typ)
		shape, ok := claudeShapes[typ]
		if !ok {
			t.Errorf("line type %q is not one of Claude's: %s", typ, raw)
			continue
		}
		for field, want := range shape {
			var v any = line
			for _, part := range strings.Split(field, ".") {
				m, _ := v.(map[string]any)
				v = m[part]
			}
			if got := jsonKind(v); !strings.Contains("|"+want+"|", "|"+got+"|") {
				t.Errorf("%s.%s is %s, want %s: %s", typ, field, got, want, raw)
			}
		}
		if msg, ok := line["message"].(map[string]any); ok {
			for _, b := range msg["content"].([]any) {
				switch bt := b.(map[string]any)["type"]; bt {
				case "text", "tool_use", "tool_result":
				default:
					t.Errorf("content block type %v is not Claude's", bt)
				}
			}
		}
	}
	got := strings.Join(order, " ")
	want := "system assistant user assistant result assistant result"
	if got != want {
		t.Errorf("line order:\n got %s\nwant %s", got, want)
	}
}

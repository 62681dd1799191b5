package repl

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// askerEnv makes the test binary the MCP server "asker" (TestMain).
const askerEnv = "ODIN_REPL_TEST_MCP_ASKER"

// esc is the Escape key alone.
const esc = "\x1b"

// askerMessage is the server's question: a terminal escape (a title
// change) and markdown that must reach the screen inert, as text.
const askerMessage = "Who are you? \x1b]0;pwned\x07 **not bold** [link](javascript:alert(1))"

// askerServer is an MCP server on stdio whose tool "ask" asks the user a
// form (elicitation) and reports the answer as its result.
func askerServer() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Ask the user who they are."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			params := &sdk.ElicitParams{Message: askerMessage, RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name":      map[string]any{"type": "string", "title": "Name"},
					"age":       map[string]any{"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
					"color":     map[string]any{"type": "string", "enum": []string{"red", "green", "blue"}, "default": "green"},
					"subscribe": map[string]any{"type": "boolean"},
				},
				"required": []string{"name"},
			}}
			// From protocol 2026-07-28 on the request rides the call's
			// result (multi round-trip); before, it is a request of its own.
			var res *sdk.ElicitResult
			if r, ok := req.Params.InputResponses["who"].(*sdk.ElicitResult); ok {
				res = r
			} else if req.Session.InitializeParams().ProtocolVersion >= "2026-07-28" {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"who": params}}, nil, nil
			} else {
				var err error
				if res, err = req.Session.Elicit(ctx, params); err != nil {
					return nil, nil, err
				}
			}
			text := "the user answered " + res.Action
			if res.Action == "accept" {
				text += fmt.Sprintf(": name=%v age=%v color=%v subscribe=%v", res.Content["name"], res.Content["age"], res.Content["color"], res.Content["subscribe"])
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 0
	}
	return 0
}

// TestREPLAnswersAnMCPServersForm: a tool call's server asks a form; the
// REPL shows the server's message inert (no escape reaches the terminal,
// markdown stays literal), asks field by field, refuses a value outside
// the schema and asks again, applies defaults on Enter, and the server
// gets exactly the typed and default values. A second request cancelled
// with Esc reaches the server as cancel.
func TestREPLAnswersAnMCPServersForm(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	writeFile(t, state, "config/odin/odin.yaml", fmt.Sprintf("mcp:\n  servers:\n    asker:\n      command: %q\n      env: {%s: \"1\"}\n", self, askerEnv))
	tm := start(t, steps(
		llmtest.Step{When: "ask me", ToolCalls: []llmtest.ToolCall{{Name: "mcp__asker__ask", Arguments: llmtest.Args(map[string]any{})}}},
		llmtest.Step{When: "the user answered accept", Text: "got your form"},
		llmtest.Step{When: "again", ToolCalls: []llmtest.ToolCall{{Name: "mcp__asker__ask", Arguments: llmtest.Args(map[string]any{})}}},
		llmtest.Step{When: "the user answered cancel", Text: "you cancelled"},
	), options{args: []string{"--allow", "mcp__asker__*"}, state: state})
	tm.Expect("edit ❯")
	tm.Type("ask me" + enter)
	tm.Expect("input requested: MCP server asker asks")
	tm.Expect("**not bold** [link](javascript:alert(1))")
	// A Go server sends its schema's properties sorted by name.
	tm.Expect("age (1 of 4)")
	tm.Expect("Enter for 30")
	tm.Type("200" + enter) // above the maximum: refused, asked again
	tm.Expect("age: at most 150")
	tm.Type("41" + enter)
	tm.Expect("color (2 of 4)")
	tm.Expect("1 red, 2 green, 3 blue")
	tm.Type(enter) // the default
	tm.Expect("Name (3 of 4)")
	tm.Expect("required")
	tm.Type(enter) // required, no default: asked again
	tm.Expect("Name: a value is required")
	tm.Type("Ada" + enter)
	tm.Expect("subscribe (4 of 4)")
	tm.Type("yes" + enter)
	tm.Expect("Enter sends these")
	tm.Type(enter)
	tm.Expect("input sent: MCP server asker")
	tm.Expect("got your form")
	if got := toolResult(t, tm); !strings.Contains(got, "the user answered accept: name=Ada age=41 color=green subscribe=true") {
		t.Errorf("the server got %q", got)
	}

	tm.Type("again" + enter)
	tm.Expect("age (1 of 4)")
	tm.Type(esc)
	tm.Expect("input cancelled: MCP server asker")
	tm.Expect("you cancelled")

	// The server's escape sequence never reached the terminal.
	tm.mu.Lock()
	raw := tm.raw.String()
	tm.mu.Unlock()
	if strings.Contains(raw, "]0;pwned") {
		t.Error("the server's message wrote a terminal escape (title change) to the screen")
	}
}

// toolResult is the text of the last tool result the model was sent.
func toolResult(t *testing.T, tm *term) string {
	t.Helper()
	reqs := tm.Srv.RequestsFor("orchestrator")
	for i := len(reqs) - 1; i >= 0; i-- {
		msgs := reqs[i].Body.LLMMessages()
		for j := len(msgs) - 1; j >= 0; j-- {
			if msgs[j].Role == "tool" {
				return msgs[j].Content
			}
		}
	}
	return ""
}

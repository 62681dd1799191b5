package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// mcpAskerName is the name under which this test binary is an MCP server
// (TestMain runs mcpAsker when started under it).
const mcpAskerName = "mcp-asker"

// mcpAsker is an MCP server on stdio whose tool ask asks the user a form
// (name, a string; age, a whole number of at least 0) and reports the
// answer it got.
func mcpAsker() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Ask the user for their name and age."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			params := &sdk.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{"type": "object",
				"properties": map[string]any{"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer", "minimum": 0}},
				"required":   []string{"name"}}}
			res, ok := req.Params.InputResponses["who"].(*sdk.ElicitResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"who": params}}, nil, nil
			}
			b, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("the user answered %s %s", res.Action, b)}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 0 // stdin closed: the client went away
	}
	return 0
}

// TestElicitationThroughTheFront: an MCP server of a session a worker
// hosts asks for input during a tool call; odin serve --cluster (the
// front, hosting nothing) streams the request, lists it, refuses an
// answer outside the form with 400 (the request stays pending) and
// routes the valid answer to the worker, whose server gets it.
func TestElicitationThroughTheFront(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts two odin processes and an MCP server")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap not installed: MCP servers run sandboxed")
	}
	script := llmtest.NewScript()
	script.Add("orchestrator",
		llmtest.Step{When: "ask me", ToolCalls: []llmtest.ToolCall{llmtest.Call("mcp__fx__ask", map[string]any{})}},
		llmtest.Step{When: "the user answered", Text: "thanks"},
	)
	f := newFleet(t, script, "")
	// The server is this test binary under another name, beside the
	// project (the sandbox keeps a server's own program visible).
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	asker := filepath.Join(f.dir, "bin", mcpAskerName)
	if err := os.MkdirAll(filepath.Dir(asker), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(asker, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(f.dir, "config", "odin")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("mcp:\n  servers:\n    fx:\n      command: %q\n", asker)
	if err := os.WriteFile(filepath.Join(cfgDir, "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	f.worker("worker-1")
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session: %d %v %v", code, s, err)
	}
	id := s["id"].(string)
	evs, err := fr.events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "ask me"}); err != nil || code != http.StatusAccepted {
		t.Fatalf("message: %d %v %v", code, out, err)
	}
	asked, resolved := 0, 0
	for finished := false; !finished; {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatal("the event stream ended")
			}
			switch ev.typ {
			case "approval_requested":
				aid, _ := ev.data["id"].(string)
				if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/approvals/"+aid, map[string]string{"decision": "once"}); err != nil || code != http.StatusNoContent {
					t.Fatalf("answer approval %s: %d %v %v", aid, code, out, err)
				}
			case "elicitation_requested":
				asked++
				eid, _ := ev.data["id"].(string)
				if ev.data["server"] != "fx" || !strings.Contains(fmt.Sprint(ev.data["schema"]), "age") {
					t.Errorf("elicitation_requested = %v", ev.data)
				}
				if listed := fr.listElicitations(t, id); !strings.Contains(listed, eid) {
					t.Errorf("GET elicitations lacks %s: %s", eid, listed)
				}
				path := "/v1/sessions/" + id + "/elicitations/" + eid
				if code, out, err := fr.call("POST", path, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "age": "old"}}); err != nil || code != http.StatusBadRequest {
					t.Errorf("an answer outside the form: %d %v %v, want 400", code, out, err)
				}
				if listed := fr.listElicitations(t, id); !strings.Contains(listed, eid) {
					t.Errorf("the refused answer resolved %s: %s", eid, listed)
				}
				if code, out, err := fr.call("POST", path, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "age": 36}}); err != nil || code != http.StatusNoContent {
					t.Fatalf("answer %s: %d %v %v", eid, code, out, err)
				}
			case "elicitation_resolved":
				resolved++
			case "turn_finished":
				finished = true
				res, _ := ev.data["result"].(map[string]any)
				if res["status"] != "done" || res["answer"] != "thanks" {
					t.Errorf("turn %v %q", res["status"], res["answer"])
				}
			}
		case <-ctx.Done():
			t.Fatal("the turn never finished")
		}
	}
	if asked != 1 || resolved != 1 {
		t.Errorf("%d elicitations asked and %d resolved, want 1 and 1", asked, resolved)
	}
	reqs := f.model.RequestsFor("orchestrator")
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Raw), `the user answered accept {\"age\":36,\"name\":\"Ada\"}`) {
		t.Errorf("the server's result did not reach the model with the answer (%d requests)", len(reqs))
	}
	if listed := fr.listElicitations(t, id); listed != "[]" {
		t.Errorf("elicitations pending after the turn: %s", listed)
	}
}

// listElicitations is GET /v1/sessions/ID/elicitations's body.
func (fr *front) listElicitations(t *testing.T, id string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", fr.base+"/v1/sessions/"+id+"/elicitations", nil)
	req.Header.Set("Authorization", "Bearer "+fr.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

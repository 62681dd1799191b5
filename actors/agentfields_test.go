package actors

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// Attack: an agent capped at permission_mode plan is delegated to in an
// edit turn and tries to write anyway (over an existing file, and a new
// one). The file is unchanged and the canary
// never created: the cap is the mode the agent works in, so its write
// tools are not there to call.
func TestPermissionModeCapsAnAgentInAnEditTurn(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("scout", "look", "look around")),
			llmtest.Reply("done"),
		).
		Add("scout",
			// Write is the harness's real write-class tool; the built-in
			// names are stand-ins here.
			llmtest.Calls(
				llmtest.Call("Write", map[string]any{"path": "{{root}}/keep.txt", "content": "OVERWRITTEN"}),
				llmtest.Call("Write", map[string]any{"path": "{{root}}/canary.txt", "content": "x"}),
			),
			report(map[string]any{"summary": "looked", "details": ""}),
		)
	h := newHarness(t, s, withConfig(func(c *config.Config) {
		c.Agents = map[string]config.Agent{"scout": {Description: "looks around", Prompt: "Look around.", PermissionMode: "plan"}}
	}))
	keep := filepath.Join(h.root, "keep.txt")
	if err := os.WriteFile(keep, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.sess.Submit("look around", messages.ModeEdit)
	if r := h.turn(); r.Status != messages.TurnDone {
		t.Fatalf("turn = %+v", r)
	}
	if data, _ := os.ReadFile(keep); string(data) != "original\n" {
		t.Errorf("keep.txt = %q: the plan-capped agent wrote", data)
	}
	if _, err := os.Stat(filepath.Join(h.root, "canary.txt")); !os.IsNotExist(err) {
		t.Errorf("canary.txt exists (err %v): the plan-capped agent created a file", err)
	}
	reqs := h.client.RequestsFor("scout")
	if len(reqs) == 0 {
		t.Fatal("scout never ran")
	}
	for _, name := range toolNames(reqs[0]) {
		if slices.Contains([]string{"Write", "WriteFile", "EditTool", "MultiEditTool"}, name) {
			t.Errorf("the plan-capped agent was offered %s", name)
		}
	}
	// Uncapped, the same agent would have had the write tools: the test
	// would catch a cap that did nothing.
	if !slices.Contains(toolNames(h.client.RequestsFor("orchestrator")[0]), "WriteFile") {
		t.Error("the edit turn itself had no WriteFile; the test proves nothing")
	}
}

// The critical reminder is the last message of every request of the
// agent, over real HTTP, and the request prefix (system prompt, brief,
// earlier turns) stays as the previous request sent it, so a provider's
// prompt cache still hits.
func TestCriticalReminderEndsEveryRequest(t *testing.T) {
	const reminder = "CRIT-7731: never edit files."
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("scout", "look", "look around")),
			llmtest.Reply("done"),
		).
		Add("scout",
			llmtest.Calls(llmtest.Call("LS", map[string]any{"path": "{{root}}"})),
			llmtest.Calls(llmtest.Call("Glob", map[string]any{"pattern": "*"})),
			report(map[string]any{"summary": "looked", "details": ""}),
		)
	var srv *llmtest.Server
	h := newHarness(t, s, overHTTP(t, s), func(d *Deps) { srv = httpServers[d] }, withConfig(func(c *config.Config) {
		c.Agents = map[string]config.Agent{"scout": {Description: "looks around", Prompt: "Look around.", CriticalReminder: reminder, Tools: []string{"LS", "Glob"}}}
	}))
	h.sess.Submit("look around", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnDone {
		t.Fatalf("turn = %+v", r)
	}
	reqs := srv.RequestsFor("scout")
	if len(reqs) != 3 {
		t.Fatalf("scout sent %d requests, want 3", len(reqs))
	}
	var prev []llm.Message
	for i, r := range reqs {
		msgs := r.Body.LLMMessages()
		last := msgs[len(msgs)-1]
		if last.Role != llm.RoleUser || !strings.Contains(last.Content, reminder) {
			t.Errorf("request %d ends with %s %q, not the reminder", i, last.Role, last.Content)
		}
		n := 0
		for _, m := range msgs {
			if strings.Contains(m.Content, reminder) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("request %d carries the reminder %d times, want once (it is not kept in the history)", i, n)
		}
		body := msgs[:len(msgs)-1]
		if prev != nil {
			if len(body) <= len(prev) {
				t.Fatalf("request %d did not grow", i)
			}
			for j := range prev {
				if body[j].Role != prev[j].Role || body[j].Content != prev[j].Content {
					t.Errorf("request %d changed message %d of the previous request's prefix", i, j)
				}
			}
		}
		prev = body
	}
	// The Orchestrator's requests do not carry another agent's reminder.
	for _, r := range srv.RequestsFor("orchestrator") {
		for _, m := range r.Body.LLMMessages() {
			if strings.Contains(m.Content, reminder) {
				t.Error("the reminder leaked into the Orchestrator's request")
			}
		}
	}
}

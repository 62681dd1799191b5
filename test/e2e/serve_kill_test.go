package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// killSessions is how many sessions TestServeKillAfterDone runs: a few
// dozen in CI; ODIN_KILL_SESSIONS=300 for the load the issue measured.
func killSessions(t *testing.T) int {
	n := 24
	if s := os.Getenv("ODIN_KILL_SESSIONS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("ODIN_KILL_SESSIONS=%q: want a positive number", s)
		}
		n = v
	}
	return n
}

// killScript gives every session two turns: the first reads the session's
// own file and answers from it, the second is held until every session has
// asked it, so that all the last turns end in one burst.
func killScript(root string, n int) *llmtest.Script {
	s := llmtest.NewScript()
	for i := range n {
		tag := fmt.Sprintf("[s%d]", i)
		s.Add("orchestrator",
			llmtest.Step{When: tag + " first question", ToolCalls: []llmtest.ToolCall{llmtest.Call("ReadFile", map[string]any{"file_path": fmt.Sprintf("%s/s%d.txt", root, i)})}},
			llmtest.Step{When: "content of " + tag, Text: "answer " + tag + " one"},
			llmtest.Step{When: tag + " second question", Hold: tag, Text: "answer " + tag + " two"},
		)
	}
	return s
}

// taggedEvent is an SSE event of session i.
type taggedEvent struct {
	i  int
	ev sseEvent
}

// TestServeKillAfterDone: what odin serve reports as done survives a
// kill -9. Many sessions run two turns over the HTTP API against the real
// binary and a real SQLite store; the last turns end together, and serve
// is killed with SIGKILL the moment the client has seen the last
// turn_finished. Restarted on the same state directory, every session's
// export holds both questions, the tool result and both answers. Before
// turn_finished waited for the journal's commit, a kill at that moment
// lost up to 41% of the user messages.
func TestServeKillAfterDone(t *testing.T) {
	n := killSessions(t)
	env, root := acpEnv(t)
	for i := range n {
		writeFile(t, root, fmt.Sprintf("s%d.txt", i), fmt.Sprintf("content of [s%d]\n", i))
	}
	srv, err := llmtest.Serve("127.0.0.1:0", killScript(root, n))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	cmd, c := startServe(t, env, root)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids := make([]string, n)
	merged := make(chan taggedEvent, 64*n)
	for i := range n {
		ids[i] = c.do("POST", "/v1/sessions", map[string]string{"project": root}, http.StatusCreated)["id"].(string)
		evs := c.stream(ctx, ids[i], "")
		go func() {
			for ev := range evs {
				merged <- taggedEvent{i, ev}
			}
		}()
	}
	// finished waits until every session has finished one more turn and
	// checks its answer; it calls last (if set) the moment the final
	// turn_finished is read, before anything else.
	finished := func(answer string, last func()) {
		t.Helper()
		var results []map[string]any
		got := make([]map[string]any, n)
		for len(results) < n {
			var te taggedEvent
			select {
			case te = <-merged:
			case <-ctx.Done():
				t.Fatalf("%d of %d sessions finished their turn", len(results), n)
			}
			if te.ev.Type != "turn_finished" {
				continue
			}
			res, _ := te.ev.Data["result"].(map[string]any)
			results = append(results, res)
			got[te.i] = res
			if len(results) == n && last != nil {
				last()
			}
		}
		for i, res := range got {
			want := fmt.Sprintf("answer [s%d] %s", i, answer)
			if res["status"] != "done" || res["answer"] != want || res["not_saved"] != nil {
				t.Errorf("session %d: turn_finished %v, want done with %q", i, res, want)
			}
		}
	}

	for i, id := range ids {
		c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": fmt.Sprintf("[s%d] first question", i), "mode": "ask"}, http.StatusAccepted)
	}
	finished("one", nil)
	for i, id := range ids {
		c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": fmt.Sprintf("[s%d] second question", i), "mode": "ask"}, http.StatusAccepted)
	}
	for i := range n {
		if err := srv.WaitHeld(ctx, fmt.Sprintf("[s%d]", i)); err != nil {
			t.Fatalf("session %d's second turn never reached the model: %v", i, err)
		}
	}
	for i := range n {
		srv.Release(fmt.Sprintf("[s%d]", i))
	}
	finished("two", func() {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	})
	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("odin serve ended with %v, not by the SIGKILL", cmd.ProcessState)
	}
	cancel()

	_, c = startServe(t, env, root)
	missing := 0
	for i, id := range ids {
		export := c.get("/v1/sessions/" + id + "/export")
		tag := fmt.Sprintf("[s%d]", i)
		for _, want := range []string{tag + " first question", "content of " + tag, "answer " + tag + " one", tag + " second question", "answer " + tag + " two"} {
			if !strings.Contains(export, want) {
				missing++
				t.Errorf("session %d (%s): the export after the kill lacks %q", i, id, want)
			}
		}
	}
	if missing > 0 {
		t.Logf("%d of %d reported items lost by the kill", missing, 5*n)
	}
}

// get returns the body of a GET that must answer 200.
func (c *apiClient) get(path string) string {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.client().Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET %s: %s %s", path, resp.Status, body)
	}
	return string(body)
}

package llm_test

import (
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestIdleConnectionsClose: clients without an HTTP client of their own
// (odin serve builds one per session) share their provider connections,
// and an idle one is closed after IdleConnTimeout, as the scripted server
// sees it.
func TestIdleConnectionsClose(t *testing.T) {
	const sessions = 5
	script := llmtest.NewScript()
	for range sessions {
		script.Add("orchestrator", llmtest.Reply("hi"))
	}
	srv := llmtest.NewServer(t, script)
	// A timeout no other test uses, so this test's pool is its own.
	const idle = 250 * time.Millisecond
	for range sessions {
		c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL(), IdleConnTimeout: idle})
		req := llm.Request{Model: "m", Agent: "orchestrator", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}
		if _, err := c.Stream(t.Context(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	// One after another, the clients reused one connection: each body is
	// read to its end, and Go's transport pools the connection before that
	// last read returns. A pool per client would hold one each.
	if got := srv.OpenConns(); got != 1 {
		t.Errorf("%d connections open after %d sequential calls by %d clients, want one, shared and kept", got, sessions, sessions)
	}
	deadline := time.Now().Add(20 * time.Second)
	for srv.OpenConns() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := srv.OpenConns(); got != 0 {
		t.Errorf("%d idle connections still open well after their %v idle timeout", got, idle)
	}
}

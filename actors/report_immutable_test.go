package actors

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// The parent completes a received report without writing to it: the
// sender, or anyone the report was shown to, may still be reading it on
// another goroutine (run with -race: a write in place is a data race).
func TestCompletingAReportLeavesTheSentOneAlone(t *testing.T) {
	sent := &messages.Report{TaskID: "t1", Agent: "code", Status: messages.ReportOK, Files: []string{"/p/a.go"}}
	want := *sent
	want.Files = []string{"/p/a.go"}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the sender, still looking at what it sent
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = sent.Restarts + len(sent.SessionID)
			}
		}
	}()
	var got *messages.Report
	for range 100 {
		got = withRunFacts(sent, 2, "t1")
	}
	close(stop)
	wg.Wait()
	if diff := cmp.Diff(&want, sent); diff != "" {
		t.Errorf("the sent report changed (-before +after):\n%s", diff)
	}
	if got == sent || got.Restarts != 2 || got.SessionID != "t1" {
		t.Errorf("completed report = %+v (same pointer: %v)", got, got == sent)
	}
	if r := withRunFacts(&messages.Report{Restarts: 1, SessionID: "s"}, 2, "t1"); r.Restarts != 1 || r.SessionID != "s" {
		t.Errorf("facts the report already had were overwritten: %+v", r)
	}
}

// Through the real Orchestrator: a report it receives is completed (run
// facts, output filter, registry, event) without a write to the message
// its sender still holds. The test plays the sender and keeps reading
// what it sent while the turn takes it; under -race an in-place write
// anywhere on the Orchestrator's path fails the test.
func TestOrchestratorLeavesAReceivedReportAlone(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(agentCall(map[string]any{"agent": "search", "description": "look", "prompt": "look it up"})),
			llmtest.Step{When: "from the sender", Text: "done"},
		).
		Add("search", llmtest.Step{Hold: "s", ToolCalls: searchReport("never sent").ToolCalls})
	h := newHarness(t, s)
	defer h.client.Release("s")
	h.sess.Submit("look", messages.ModeAsk)
	started, _ := next[messages.AgentStarted](h)
	result, _ := json.Marshal(map[string]any{"query": "q", "findings": []any{}, "summary": "from the sender", "confidence": 0.9})
	sent := &messages.Report{TaskID: started.TaskID, Agent: "search", Status: messages.ReportOK,
		Summary: "from the sender", Result: result, Files: []string{h.root + "/a.go"}}
	want := *sent
	want.Files = slices.Clone(sent.Files)
	want.Result = slices.Clone(sent.Result)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the sender, still looking at what it sent
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = sent.Restarts + len(sent.SessionID) + len(sent.Summary) + len(sent.Files[0]) + len(sent.Result) + int(sent.Usage.TotalTokens)
				_ = sent.Status + messages.ReportStatus(sent.Error)
			}
		}
	}()
	h.sess.system.Root.Send(h.sess.orch, sent)
	r := h.turn()
	close(stop)
	wg.Wait()
	if r.Answer != "done" {
		t.Fatalf("turn = %+v", r)
	}
	if diff := cmp.Diff(&want, sent); diff != "" {
		t.Errorf("the sent report changed (-before +after):\n%s", diff)
	}
}

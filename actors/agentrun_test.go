package actors

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

func agentCall(in map[string]any) llmtest.ToolCall { return llmtest.Call(AgentToolName, in) }

func bg(agent, desc, prompt string) llmtest.ToolCall {
	return agentCall(map[string]any{"agent": agent, "description": desc, "prompt": prompt, "run_in_background": true})
}

// waitRequests waits until agent has sent n requests.
func waitRequests(t *testing.T, c *llmtest.Client, agent string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(c.RequestsFor(agent)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s sent %d requests, want %d", agent, len(c.RequestsFor(agent)), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func runsByHandle(t *testing.T, h *harness) map[string]messages.AgentRun {
	t.Helper()
	runs, err := h.sess.AgentRuns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]messages.AgentRun{}
	for _, r := range runs {
		out[r.Handle] = r
	}
	return out
}

func lastText(req llm.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content + "\n")
		for _, tc := range m.ToolCalls {
			b.WriteString(tc.Name + " " + tc.Arguments + "\n")
		}
	}
	return b.String()
}

// Two background runs work while the Orchestrator goes on with its own
// tools; it waits for one with agent_output and stops the other.
func TestBackgroundRunsCollectedAndStopped(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(bg("search", "find a", "find a"), bg("search", "find b", "find b"), llmtest.Call("Echo", map[string]any{"text": "reading"})),
			// Held until both specialists are at work: otherwise the stop
			// may reach search-2 before its first model call.
			llmtest.Step{When: "echo: reading", Hold: "orch", ToolCalls: []llmtest.ToolCall{
				llmtest.Call(AgentOutputToolName, map[string]any{"id": "search-1", "timeout_seconds": 60}),
				llmtest.Call(AgentStopToolName, map[string]any{"id": "search-2"}),
			}},
			llmtest.Step{When: "a found", Text: "done"},
		).
		Add("search",
			llmtest.Step{When: "find a", Hold: "a", ToolCalls: searchReport("a found").ToolCalls},
			llmtest.Step{When: "find b", Hold: "b", ToolCalls: searchReport("b found").ToolCalls},
		)
	h := newHarness(t, s)
	h.sess.Submit("find two things", messages.ModeAsk)
	for _, name := range []string{"a", "b", "orch"} {
		if err := h.client.WaitHeld(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
	// Both specialists are held, and the Orchestrator went on: it read
	// (Echo) and asked for the output and the stop.
	waitRequests(t, h.client, "orchestrator", 2)
	runs := runsByHandle(t, h)
	if runs["search-1"].Status != messages.RunRunning || !runs["search-1"].Background {
		t.Errorf("search-1 = %+v", runs["search-1"])
	}
	h.client.Release("orch")
	h.client.Release("a")
	r := h.turn()
	if r.Status != messages.TurnDone || r.Answer != "done" {
		t.Fatalf("turn = %+v", r)
	}
	reqs := h.client.RequestsFor("orchestrator")
	if len(reqs) != 3 {
		t.Fatalf("orchestrator requests = %d", len(reqs))
	}
	got := lastText(reqs[2])
	for _, want := range []string{"a found", "Run search-2 stopped", "Started search run search-1 in the background", "echo: reading"} {
		if !strings.Contains(got, want) {
			t.Errorf("third request lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "b found") {
		t.Errorf("the stopped run reported: %s", got)
	}
	runs = runsByHandle(t, h)
	if runs["search-1"].Status != messages.AgentRunStatus(messages.ReportOK) || runs["search-1"].Ended.IsZero() {
		t.Errorf("search-1 = %+v", runs["search-1"])
	}
	if runs["search-2"].Status != messages.RunStopped {
		t.Errorf("search-2 = %+v", runs["search-2"])
	}
}

// The model answers while a background run still works: the turn waits
// for it and gives its report to the model before ending.
func TestTurnWaitsForBackgroundRuns(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(bg("search", "look", "look")),
			llmtest.Step{When: "Started search run", Text: "first answer"},
			llmtest.Step{When: "Background agent runs you started", Text: "final answer"},
		).
		Add("search", llmtest.Step{Hold: "h", ToolCalls: searchReport("looked everywhere").ToolCalls})
	h := newHarness(t, s)
	h.sess.Submit("look around", messages.ModeAsk)
	if err := h.client.WaitHeld(t.Context(), "h"); err != nil {
		t.Fatal(err)
	}
	waitRequests(t, h.client, "orchestrator", 2)
	// Give the Orchestrator the chance to end the turn wrongly.
	time.Sleep(50 * time.Millisecond)
	if qs, err := h.sess.Queue(t.Context()); err != nil || qs.Running == nil {
		t.Fatalf("the turn ended while its background run worked: %+v %v", qs, err)
	}
	h.client.Release("h")
	r := h.turn()
	if r.Answer != "final answer" {
		t.Fatalf("turn = %+v", r)
	}
	if got := lastText(h.client.RequestsFor("orchestrator")[2]); !strings.Contains(got, "looked everywhere") {
		t.Errorf("the report did not reach the model:\n%s", got)
	}
}

// A detached run outlives its turn; its report lands in the next input.
func TestDetachedRunReportsIntoTheNextTurn(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(bg("search", "slow look", "look slowly")),
			llmtest.Step{When: "Started search run", ToolCalls: []llmtest.ToolCall{llmtest.Call(AgentStopToolName, map[string]any{"id": "search-1", "detach": true})}},
			llmtest.Step{When: "detached", Text: "left it working"},
			llmtest.Step{When: "next question", Text: "saw it"},
		).
		Add("search", llmtest.Step{Hold: "s", ToolCalls: searchReport("slow result").ToolCalls})
	st := openStore(t)
	h := newHarness(t, s, withStore(st))
	h.sess.Submit("start something slow", messages.ModeAsk)
	tf, seen := next[messages.TurnFinished](h)
	if r := tf.Result; r.Status != messages.TurnDone || r.Answer != "left it working" {
		t.Fatalf("turn = %+v", r)
	}
	reported := false
	for _, ev := range seen {
		if n, ok := ev.(messages.Notice); ok && strings.Contains(n.Text, "search-1 (search) is detached") {
			reported = true
		}
	}
	if !reported {
		t.Errorf("the turn did not report its detached run: %s", eventTypes(seen))
	}
	run := runsByHandle(t, h)["search-1"]
	if run.Status != messages.RunRunning || !run.Detached {
		t.Fatalf("detached run = %+v", run)
	}
	h.client.Release("s")
	for {
		n, _ := next[messages.Notice](h)
		if strings.Contains(n.Text, "detached agent run search-1 (search) finished") {
			break
		}
	}
	if run := runsByHandle(t, h)["search-1"]; run.Status != messages.AgentRunStatus(messages.ReportOK) || run.Summary != "slow result" || run.Pending == "" {
		t.Fatalf("finished detached run = %+v", run)
	}
	// The report waits in the store too, for a session resumed later.
	waitFor(t, func() bool {
		runs := loadAgentRuns(st, "s1")
		return len(runs) == 1 && strings.Contains(runs[0].Pending, "slow result")
	})
	h.sess.Submit("next question", messages.ModeAsk)
	if r := h.turn(); r.Answer != "saw it" {
		t.Fatalf("turn = %+v", r)
	}
	reqs := h.client.RequestsFor("orchestrator")
	got := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content
	if !strings.Contains(got, "Detached agent runs finished") || !strings.Contains(got, "slow result") || !strings.HasSuffix(got, "next question") {
		t.Errorf("next input = %q", got)
	}
	if run := runsByHandle(t, h)["search-1"]; run.Pending != "" {
		t.Errorf("the report was delivered but is still pending: %+v", run)
	}
}

// A finished run resumed by its handle starts from its whole earlier
// transcript, with the new prompt last.
func TestResumeCarriesTheEarlierTranscript(t *testing.T) {
	st := openStore(t)
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(agentCall(map[string]any{"agent": "search", "description": "look", "prompt": "look around"})),
			llmtest.Step{When: "nothing special", Text: "first"},
			llmtest.Step{When: "look again", ToolCalls: []llmtest.ToolCall{agentCall(map[string]any{"agent": "search", "description": "deeper", "prompt": "now look deeper", "resume": "search-1"})}},
			llmtest.Step{When: "found the deep thing", Text: "second"},
		).
		Add("search",
			llmtest.Calls(llmtest.Call("Grep", map[string]any{"text": "first pass"})),
			llmtest.Step{When: "stand-in", ToolCalls: searchReport("nothing special").ToolCalls},
			llmtest.Step{When: "now look deeper", ToolCalls: searchReport("found the deep thing").ToolCalls},
		)
	h := newHarness(t, s, withStore(st))
	h.sess.Submit("look", messages.ModeAsk)
	if r := h.turn(); r.Answer != "first" {
		t.Fatalf("turn 1 = %+v", r)
	}
	h.sess.Submit("look again", messages.ModeAsk)
	if r := h.turn(); r.Answer != "second" {
		t.Fatalf("turn 2 = %+v", r)
	}
	reqs := h.client.RequestsFor("search")
	if len(reqs) != 3 {
		t.Fatalf("search requests = %d", len(reqs))
	}
	var roles []string
	for _, m := range reqs[2].Messages {
		roles = append(roles, string(m.Role))
	}
	// system, the first brief, Grep call + result, Report call + result,
	// the new prompt.
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,assistant,tool,user" {
		t.Errorf("resumed request roles = %s", got)
	}
	text := lastText(reqs[2])
	for _, want := range []string{"look around", "first pass", "Grep is a stand-in", "nothing special", "now look deeper"} {
		if !strings.Contains(text, want) {
			t.Errorf("resumed request lacks %q", want)
		}
	}
	runs, _ := h.sess.AgentRuns(t.Context())
	if len(runs) != 1 || runs[0].Resumes != 1 || runs[0].Summary != "found the deep thing" {
		t.Errorf("runs = %+v", runs)
	}
	// The registry is in the store: a new session of the same ID lists it.
	h.close()
	if got := loadAgentRuns(st, "s1"); len(got) != 1 || got[0].Handle != "search-1" || got[0].Resumes != 1 {
		t.Errorf("stored runs = %+v", got)
	}
}

// Resuming needs a finished run of the same agent.
func TestResumeRefusals(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(agentCall(map[string]any{"agent": "search", "description": "x", "prompt": "x", "resume": "search-9"})),
			llmtest.Step{When: "no agent run", Text: "ok"},
		)
	h := newHarness(t, s)
	h.sess.Submit("go", messages.ModeAsk)
	if r := h.turn(); r.Answer != "ok" {
		t.Fatalf("turn = %+v", r)
	}
	if n := len(h.client.RequestsFor("search")); n != 0 {
		t.Errorf("a refused resume started a specialist (%d requests)", n)
	}
}

// Each context mode gives the specialist what it says, and nothing more.
func TestContextModes(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(llmtest.Call("Echo", map[string]any{"text": "secret-ish tool output"})),
			llmtest.Step{When: "echo: secret-ish", ToolCalls: []llmtest.ToolCall{
				agentCall(map[string]any{"agent": "search", "description": "b", "prompt": "brief task"}),
				agentCall(map[string]any{"agent": "search", "description": "s", "prompt": "scoped task", "context": "scoped", "files": []string{"{{root}}/notes.txt"}}),
				agentCall(map[string]any{"agent": "search", "description": "f", "prompt": "fork task", "context": "fork", "thoroughness": "quick"}),
			}},
			llmtest.Reply("all done"),
		).
		Add("search",
			llmtest.Step{When: "brief task", ToolCalls: searchReport("b").ToolCalls},
			llmtest.Step{When: "scoped task", ToolCalls: searchReport("s").ToolCalls},
			llmtest.Step{When: "fork task", ToolCalls: searchReport("f").ToolCalls},
		)
	h := newHarness(t, s)
	if err := os.WriteFile(h.root+"/notes.txt", []byte("the notes say 42"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.sess.Submit("the user question", messages.ModeAsk)
	if r := h.turn(); r.Answer != "all done" {
		t.Fatalf("turn = %+v", r)
	}
	first := map[string]string{}
	for _, req := range h.client.RequestsFor("search") {
		task := req.Messages[1].Content
		// The role Odin puts before the brief is not the brief.
		if _, t, ok := strings.Cut(task, "# Your task\n"); ok {
			task = t
		}
		for _, k := range []string{"brief task", "scoped task", "fork task"} {
			if strings.HasSuffix(task, k) {
				first[k] = task
			}
		}
	}
	if first["brief task"] != "brief task" {
		t.Errorf("brief = %q", first["brief task"])
	}
	sc := first["scoped task"]
	for _, want := range []string{"Summary of the conversation", "user asked: the user question", "the notes say 42", "notes.txt"} {
		if !strings.Contains(sc, want) {
			t.Errorf("scoped lacks %q:\n%s", want, sc)
		}
	}
	if strings.Contains(sc, "secret-ish tool output") {
		t.Errorf("scoped carries tool output:\n%s", sc)
	}
	fk := first["fork task"]
	for _, want := range []string{"forked from the Orchestrator", "[user] the user question", "called Echo", "[Echo result] echo: secret-ish tool output", "Thoroughness: quick"} {
		if !strings.Contains(fk, want) {
			t.Errorf("fork lacks %q:\n%s", want, fk)
		}
	}
	t.Logf("first-message sizes: brief %d, scoped %d, fork %d bytes", len(first["brief task"]), len(sc), len(fk))
}

// The fork budget drops the oldest messages and trims each tool output.
func TestForkContextBudget(t *testing.T) {
	var hist []llm.Message
	for i := 0; i < 200; i++ {
		hist = append(hist, llm.Message{Role: llm.RoleUser, Content: "question " + strings.Repeat("x", 400)},
			llm.Message{Role: llm.RoleTool, Name: "ReadFile", Content: strings.Repeat("y", 10000)})
	}
	got := forkContext(hist)
	if n := llm.EstimateTokens(got); n > forkBudget+500 {
		t.Errorf("fork context is %d tokens, budget %d", n, forkBudget)
	}
	if !strings.Contains(got, "older messages left out") || strings.Contains(got, strings.Repeat("y", 2000)) {
		t.Errorf("fork context not trimmed")
	}
}

// A specialist is spawned from its kind and starts on its Delegate: the
// parent sends only that plain message and gets progress and one Report;
// a Delegate naming no roster entry is answered with a failed Report.
func TestSpecialistStartsFromDelegate(t *testing.T) {
	s := llmtest.NewScript().Add("search", searchReport("from a message"))
	h := newHarness(t, s)
	system := actor.NewActorSystem()
	defer system.Shutdown()
	got := make(chan any, 16)
	host := &specialistHost{deps: h.deps, changeSets: &changeSets{}}
	parent := actor.PropsFromFunc(func(c actor.Context) {
		switch msg := c.Message().(type) {
		case *messages.Delegate:
			pid := c.Spawn(newSpecialistProps(host))
			c.Send(pid, msg)
		case *messages.Report, *messages.AgentProgress:
			got <- msg
		}
	})
	pid := system.Root.Spawn(parent)
	system.Root.Send(pid, &messages.Delegate{TaskID: "t1", Agent: "search", Brief: "find it", Mode: messages.ModeAsk, Timeout: 10 * time.Second, SessionID: "s1"})
	system.Root.Send(pid, &messages.Delegate{TaskID: "t2", Agent: "nosuch", Brief: "x", Mode: messages.ModeAsk, Timeout: 10 * time.Second})
	reports := map[string]*messages.Report{}
	progress := 0
	timeout := time.After(10 * time.Second)
	for len(reports) < 2 {
		select {
		case m := <-got:
			switch m := m.(type) {
			case *messages.Report:
				reports[m.TaskID] = m
			case *messages.AgentProgress:
				progress++
			}
		case <-timeout:
			t.Fatalf("reports = %+v", reports)
		}
	}
	if r := reports["t1"]; r.Status != messages.ReportOK || r.Summary != "from a message" || r.Agent != "search" {
		t.Errorf("t1 = %+v", r)
	}
	if r := reports["t2"]; r.Status != messages.ReportFailed || !strings.Contains(r.Error, "nosuch") {
		t.Errorf("t2 = %+v", r)
	}
	if progress == 0 {
		t.Error("the specialist sent its parent no progress")
	}
}

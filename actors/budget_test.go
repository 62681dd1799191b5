package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// pricedHTTP makes the harness talk to the scripted server through the
// real OpenAI adapter, with every model priced at price (dollars per
// million tokens), so that dollar budgets have something to count.
func pricedHTTP(t testing.TB, script *llmtest.Script, price config.Price, srv **llmtest.Server) harnessOpt {
	return func(d *Deps) {
		s := llmtest.NewServer(t, script, llmtest.WithVars(map[string]string{"root": d.Root}))
		c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: s.URL(), MaxRetries: -1})
		d.Models = ModelFunc(func(name string) (Model, error) {
			return Model{Client: c, ID: name + "-model", ContextWindow: 100000, Price: price}, nil
		})
		*srv = s
	}
}

// call1100 is a model step calling tool with args, billed 1000 prompt and
// 100 completion tokens.
func call1100(tool string, args any) llmtest.Step {
	return llmtest.Step{ToolCalls: []llmtest.ToolCall{llmtest.Call(tool, args)}, Usage: &llm.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}}
}

// echoSteps are n model steps each calling Echo with a different text.
func echoSteps(n int) []llmtest.Step {
	var steps []llmtest.Step
	for i := range n {
		steps = append(steps, call1100("Echo", map[string]any{"text": fmt.Sprintf("step %d", i)}))
	}
	return steps
}

// toolRuns counts the finished calls of tool made by agent.
func toolRuns(evs []messages.Event, agent, tool string) int {
	n := 0
	for _, e := range evs {
		if tf, ok := e.(messages.ToolFinished); ok && tf.Agent == agent && tf.Name == tool {
			n++
		}
	}
	return n
}

func finishedReport(t *testing.T, evs []messages.Event, agent string) messages.Report {
	t.Helper()
	for _, e := range evs {
		if af, ok := e.(messages.AgentFinished); ok && af.Report.Agent == agent {
			return af.Report
		}
	}
	t.Fatalf("no AgentFinished for %s among %s", agent, eventTypes(evs))
	return messages.Report{}
}

func requestText(t *testing.T, r llmtest.Request) string {
	t.Helper()
	b, err := json.Marshal(r.Body.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A specialist over its token, tool-call, wall-clock or dollar budget is
// stopped by its supervisor, not asked to stop: its next step does not
// run, and the Orchestrator gets a typed BudgetExceeded naming the limit,
// what was spent and what was allowed.
func TestSupervisorStopsSpecialistOverBudget(t *testing.T) {
	hold := llmtest.Step{Hold: "never", ToolCalls: []llmtest.ToolCall{llmtest.Call("Echo", map[string]any{"text": "late"})}}
	cases := []struct {
		name   string
		budget config.Budget
		steps  []llmtest.Step
		limit  messages.BudgetLimit
		// echoes is how many Echo calls may run (-1: not asserted, for the
		// wall clock).
		echoes           int
		spent, allowed   float64
		approxSpentAbove bool
	}{
		// 1100 tokens a step: the third response reaches 3300 of 2500, and
		// its call does not run.
		{name: "tokens", budget: config.Budget{Tokens: 2500}, steps: echoSteps(20), limit: messages.LimitTokens, echoes: 2, spent: 3300, allowed: 2500},
		// Three calls may run; the fourth is not.
		{name: "tool_calls", budget: config.Budget{ToolCalls: 3}, steps: echoSteps(20), limit: messages.LimitToolCalls, echoes: 3, spent: 4, allowed: 3},
		// $0.011 a step at $10 per million tokens: the third step reaches
		// $0.033 of $0.03.
		{name: "usd", budget: config.Budget{USD: 0.03}, steps: echoSteps(20), limit: messages.LimitUSD, echoes: 2, spent: 0.033, allowed: 0.03},
		// The second model call never answers; the wall budget ends it.
		{name: "wall", budget: config.Budget{Wall: 300 * time.Millisecond}, steps: append(echoSteps(1), hold), limit: messages.LimitWall, echoes: -1, spent: 0.3, allowed: 0.3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewScript().
				Add("orchestrator", llmtest.Calls(delegation("search", "look", "look around")), llmtest.Reply("the search was stopped")).
				Add("search", tc.steps...)
			var srv *llmtest.Server
			h := newHarness(t, s, pricedHTTP(t, s, config.Price{Input: 10, Output: 10}, &srv), withConfig(func(c *config.Config) {
				c.Agents = map[string]config.Agent{"search": {Budget: tc.budget}}
			}))
			h.sess.Submit("look around", messages.ModeAsk)
			tf, evs := next[messages.TurnFinished](h)
			if tf.Result.Status != messages.TurnDone || tf.Result.Answer != "the search was stopped" {
				t.Fatalf("turn = %+v", tf.Result)
			}
			r := finishedReport(t, evs, "search")
			if r.Status != messages.ReportBudget || r.Budget == nil {
				t.Fatalf("report = %+v, want budget_exceeded with a BudgetExceeded", r)
			}
			b := *r.Budget
			if b.Limit != tc.limit || b.Scope != messages.ScopeAgent || b.Agent != "search" || b.TaskID != r.TaskID {
				t.Errorf("BudgetExceeded = %+v, want the agent's %s limit", b, tc.limit)
			}
			if diff := b.Spent - tc.spent; diff < -1e-9 || diff > 1e-9 {
				t.Errorf("spent = %v, want %v", b.Spent, tc.spent)
			}
			if diff := b.Allowed - tc.allowed; diff < -1e-9 || diff > 1e-9 {
				t.Errorf("allowed = %v, want %v", b.Allowed, tc.allowed)
			}
			if tc.echoes >= 0 {
				if n := toolRuns(evs, "search", "Echo"); n != tc.echoes {
					t.Errorf("Echo ran %d times, want %d: the supervisor let a step past the budget run", n, tc.echoes)
				}
			}
			published := false
			for _, e := range evs {
				if ev, ok := e.(messages.BudgetExceeded); ok && ev.TaskID == r.TaskID && ev.Limit == tc.limit {
					published = true
				}
			}
			if !published {
				t.Errorf("no budget_exceeded event: %s", eventTypes(evs))
			}
			// The Orchestrator's model is told which limit stopped it.
			reqs := srv.RequestsFor("orchestrator")
			if len(reqs) != 2 {
				t.Fatalf("orchestrator requests = %d", len(reqs))
			}
			if got := requestText(t, reqs[1]); !strings.Contains(got, "budget_exceeded") || !strings.Contains(got, "agent "+string(tc.limit)+" budget exceeded") {
				t.Errorf("the Orchestrator's model was not told the limit: %s", got)
			}
			// search's model is small: there is nothing smaller to retry on.
			if n := len(srv.RequestsFor("search")); tc.limit != messages.LimitWall && n != tc.echoes+1 {
				t.Errorf("search requests = %d, want %d", n, tc.echoes+1)
			}
		})
	}
}

// The agent tool's budget may lower the agent's own, never raise it.
func TestDelegationBudgetOnlyLowers(t *testing.T) {
	call := func(calls int) llmtest.Step {
		return llmtest.Calls(agentCall(map[string]any{"agent": "search", "description": "look", "prompt": "look around", "budget": map[string]any{"tool_calls": calls}}))
	}
	for _, tc := range []struct {
		asked, own, want int
	}{{asked: 2, own: 5, want: 2}, {asked: 9, own: 3, want: 3}} {
		t.Run(fmt.Sprintf("asked %d own %d", tc.asked, tc.own), func(t *testing.T) {
			s := llmtest.NewScript().
				Add("orchestrator", call(tc.asked), llmtest.Reply("done")).
				Add("search", echoSteps(20)...)
			var srv *llmtest.Server
			h := newHarness(t, s, pricedHTTP(t, s, config.Price{}, &srv), withConfig(func(c *config.Config) {
				c.Agents = map[string]config.Agent{"search": {Budget: config.Budget{ToolCalls: tc.own}}}
			}))
			h.sess.Submit("look", messages.ModeAsk)
			_, evs := next[messages.TurnFinished](h)
			r := finishedReport(t, evs, "search")
			if r.Budget == nil || r.Budget.Allowed != float64(tc.want) {
				t.Fatalf("report = %+v, want stopped at %d tool calls", r, tc.want)
			}
			if n := toolRuns(evs, "search", "Echo"); n != tc.want {
				t.Errorf("Echo ran %d times, want %d", n, tc.want)
			}
		})
	}
}

// A run over its own budget on the main model is run once more on the
// small model, and the Orchestrator's model is told both.
func TestOverBudgetRetriesOnceOnTheSmallModel(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("worker", "work", "do the work")), llmtest.Reply("done")).
		Add("worker", append(echoSteps(2), report(map[string]any{"summary": "done on small"}))...)
	var srv *llmtest.Server
	h := newHarness(t, s, pricedHTTP(t, s, config.Price{}, &srv), withConfig(func(c *config.Config) {
		c.Agents = map[string]config.Agent{"worker": {Description: "does work", Prompt: "Work.", Tools: []string{"Echo"}, Budget: config.Budget{ToolCalls: 1}}}
	}))
	h.sess.Submit("work", messages.ModeAsk)
	_, evs := next[messages.TurnFinished](h)
	var reports []messages.Report
	for _, e := range evs {
		if af, ok := e.(messages.AgentFinished); ok {
			reports = append(reports, af.Report)
		}
	}
	if len(reports) != 2 || reports[0].Status != messages.ReportBudget || reports[1].Status != messages.ReportOK {
		t.Fatalf("reports = %+v, want one over budget then one ok", reports)
	}
	if reports[0].Model != "main-model" || reports[1].Model != "small-model" {
		t.Errorf("models = %s, %s; want main-model then small-model", reports[0].Model, reports[1].Model)
	}
	got := requestText(t, srv.RequestsFor("orchestrator")[1])
	if !strings.Contains(got, "retried on the small model") || !strings.Contains(got, "done on small") {
		t.Errorf("the Orchestrator's model was not told of the retry: %s", got)
	}
}

// A resumed run starts its budget from what it spent before: 2200 of its
// 3000 tokens went to the first run, so the first response of the
// resumption (1100 more) is over.
func TestResumedRunKeepsItsSpend(t *testing.T) {
	st := openStore(t)
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Step{When: "look", ToolCalls: []llmtest.ToolCall{agentCall(map[string]any{"agent": "search", "description": "look", "prompt": "look around"})}},
			llmtest.Step{When: "first pass done", Text: "first"},
			llmtest.Step{When: "again", ToolCalls: []llmtest.ToolCall{agentCall(map[string]any{"agent": "search", "description": "deeper", "prompt": "now look deeper", "resume": "search-1"})}},
			llmtest.Step{When: "budget", Text: "second"},
		).
		Add("search",
			call1100("Echo", map[string]any{"text": "one"}),
			llmtest.Step{ToolCalls: searchReport("first pass done").ToolCalls, Usage: &llm.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}},
			call1100("Echo", map[string]any{"text": "deeper"}),
			searchReport("never reached"),
		)
	var srv *llmtest.Server
	h := newHarness(t, s, withStore(st), pricedHTTP(t, s, config.Price{Input: 1, Output: 1}, &srv), withConfig(func(c *config.Config) {
		c.Agents = map[string]config.Agent{"search": {Budget: config.Budget{Tokens: 3000}}}
	}))
	h.sess.Submit("look", messages.ModeAsk)
	if r := h.turn(); r.Answer != "first" {
		t.Fatalf("turn 1 = %+v", r)
	}
	runs, _ := h.sess.AgentRuns(t.Context())
	if len(runs) != 1 || runs[0].Tokens != 2200 || runs[0].USD <= 0 {
		t.Fatalf("runs after turn 1 = %+v, want 2200 tokens and a cost", runs)
	}
	h.sess.Submit("again", messages.ModeAsk)
	tf, evs := next[messages.TurnFinished](h)
	if tf.Result.Answer != "second" {
		t.Fatalf("turn 2 = %+v", tf.Result)
	}
	r := finishedReport(t, evs, "search")
	if r.Budget == nil || r.Budget.Limit != messages.LimitTokens || r.Budget.Spent != 3300 {
		t.Fatalf("resumed report = %+v, want stopped at 3300 of 3000 tokens", r)
	}
	if n := toolRuns(evs, "search", "Echo"); n != 0 {
		t.Errorf("the resumed run's Echo ran %d times past its budget", n)
	}
	runs, _ = h.sess.AgentRuns(t.Context())
	if runs[0].Tokens != 3300 || runs[0].Resumes != 1 {
		t.Errorf("runs after the resumption = %+v", runs)
	}
	// The record in the store carries the spend for a later process.
	h.close()
	if got := loadAgentRuns(st, "s1"); len(got) != 1 || got[0].Tokens != 3300 || got[0].USD <= runs[0].USD/2 {
		t.Errorf("stored runs = %+v", got)
	}
}

// The session's dollar budget ends the turn before the Orchestrator's
// next model call, with the typed verdict in the turn's result.
func TestSessionBudgetEndsTheTurn(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", call1100("Echo", map[string]any{"text": "a"}), call1100("Echo", map[string]any{"text": "b"}), llmtest.Reply("never"))
	var srv *llmtest.Server
	h := newHarness(t, s, pricedHTTP(t, s, config.Price{Input: 10, Output: 10}, &srv), withConfig(func(c *config.Config) {
		c.Budget.Session.USD = 0.01
	}))
	h.sess.Submit("spend", messages.ModeAsk)
	r := h.turn()
	if r.Status != messages.TurnBudgetExceeded || r.Budget == nil || r.Budget.Scope != messages.ScopeSession || r.Budget.Limit != messages.LimitUSD {
		t.Fatalf("turn = %+v, want budget_exceeded on the session's usd", r)
	}
	if !strings.Contains(r.Error, "--max-budget-usd") {
		t.Errorf("error %q does not name the setting", r.Error)
	}
	if n := len(srv.RequestsFor("orchestrator")); n != 1 {
		t.Errorf("orchestrator requests = %d, want 1: the call after the budget was spent was made", n)
	}
}

// A scripted model repeating one call 20 times is stopped at the
// configured count of identical calls with identical results.
func TestRunawayRepeatIsStoppedAtN(t *testing.T) {
	var steps []llmtest.Step
	for range 20 {
		steps = append(steps, llmtest.Calls(llmtest.Call("Echo", map[string]any{"text": "same"})))
	}
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("search", "look", "look around")), llmtest.Reply("stopped")).
		Add("search", steps...)
	var srv *llmtest.Server
	h := newHarness(t, s, pricedHTTP(t, s, config.Price{}, &srv), withConfig(func(c *config.Config) {
		c.Runaway.Identical = 4
	}))
	h.sess.Submit("look", messages.ModeAsk)
	_, evs := next[messages.TurnFinished](h)
	r := finishedReport(t, evs, "search")
	if r.Status != messages.ReportNoProgress || r.NoProgress == nil || r.NoProgress.Kind != messages.NoProgressRepeat || r.NoProgress.Calls != 4 || r.NoProgress.Tool != "Echo" {
		t.Fatalf("report = %+v (no progress %+v), want stopped after 4 identical Echo calls", r, r.NoProgress)
	}
	if n := toolRuns(evs, "search", "Echo"); n != 4 {
		t.Errorf("Echo ran %d times, want 4", n)
	}
	if n := len(srv.RequestsFor("search")); n != 4 {
		t.Errorf("search requests = %d, want 4", n)
	}
	var np *messages.NoProgress
	for _, e := range evs {
		if ev, ok := e.(messages.NoProgress); ok {
			np = &ev
		}
	}
	if np == nil || np.TaskID != r.TaskID {
		t.Errorf("no no_progress event for the run: %s", eventTypes(evs))
	}
	if got := requestText(t, srv.RequestsFor("orchestrator")[1]); !strings.Contains(got, "same Echo call 4 times") {
		t.Errorf("the Orchestrator's model was not told why: %s", got)
	}
}

// peekTool is a read tool that takes a file path, as ReadFile does.
func peekTool() tool.Tool {
	type in struct {
		FilePath string `json:"file_path"`
	}
	return tool.New[in]("Peek", tool.ClassRead, "read a file", func(_ context.Context, _ *tool.Env, i in) (tool.Result, error) {
		return tool.Result{Output: "contents of " + i.FilePath}, nil
	})
}

// Repetitive work that makes progress is not stopped: 20 reads of 20
// different files pass a window of 4, while 20 calls that read nothing
// new trip it at the fourth.
func TestRunawayWindowSparesProgress(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool string
		args func(i int) any
		// stopAt is the call the window trips at (0: never).
		stopAt int
	}{
		{name: "20 different files", tool: "Peek", args: func(i int) any { return map[string]any{"file_path": fmt.Sprintf("/src/f%d.go", i)} }},
		{name: "20 calls reading nothing", tool: "Echo", args: func(i int) any { return map[string]any{"text": fmt.Sprintf("%d", i)} }, stopAt: 4},
		// Two new files, then four rereads.
		{name: "two files read in turn", tool: "Peek", args: func(i int) any { return map[string]any{"file_path": fmt.Sprintf("/src/f%d.go", i%2)} }, stopAt: 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var steps []llmtest.Step
			for i := range 20 {
				steps = append(steps, llmtest.Calls(llmtest.Call(tc.tool, tc.args(i))))
			}
			steps = append(steps, report(map[string]any{"summary": "read them all"}))
			s := llmtest.NewScript().
				Add("orchestrator", llmtest.Calls(delegation("reader", "read", "read the files")), llmtest.Reply("done")).
				Add("reader", steps...)
			var srv *llmtest.Server
			h := newHarness(t, s, pricedHTTP(t, s, config.Price{}, &srv), func(d *Deps) {
				d.Tools = d.Tools.With(peekTool())
			}, withConfig(func(c *config.Config) {
				c.Runaway.Window = 4
				c.Agents = map[string]config.Agent{"reader": {Description: "reads files", Prompt: "Read.", Tools: []string{"Peek", "Echo"}}}
			}))
			h.sess.Submit("read", messages.ModeAsk)
			_, evs := next[messages.TurnFinished](h)
			r := finishedReport(t, evs, "reader")
			runs := toolRuns(evs, "reader", tc.tool)
			if tc.stopAt == 0 {
				if r.Status != messages.ReportOK || runs != 20 {
					t.Fatalf("report = %+v after %d calls, want ok after 20", r, runs)
				}
				for _, e := range evs {
					if _, ok := e.(messages.NoProgress); ok {
						t.Fatal("progressing work tripped NoProgress")
					}
				}
				return
			}
			if r.Status != messages.ReportNoProgress || r.NoProgress == nil || r.NoProgress.Kind != messages.NoProgressStall || runs != tc.stopAt {
				t.Fatalf("report = %+v after %d calls, want no_progress after %d", r, runs, tc.stopAt)
			}
		})
	}
}

// An agent's budget comes from odin.yaml or its file's front matter
// (durations as written there); a negative limit is refused by name.
func TestRosterBudgets(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".odin", "agents")
	writeAgent(t, filepath.Join(dir, "scout.md"), "---\ndescription: looks around\nbudget: {tokens: 50000, tool_calls: 40, wall: 10m, usd: 0.25}\n---\nLook around.\n")
	cfg := config.Default()
	cfg.Agents = map[string]config.Agent{"search": {Budget: config.Budget{ToolCalls: 7}}}
	r, err := LoadRoster(RosterOptions{Config: cfg, ConfigDir: root, AgentDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	scout, _ := r.Get("scout")
	if want := (messages.Budget{Tokens: 50000, ToolCalls: 40, Wall: 10 * time.Minute, USD: 0.25}); scout.Budget != want {
		t.Errorf("scout budget = %+v, want %+v", scout.Budget, want)
	}
	search, _ := r.Get("search")
	if search.Budget != (messages.Budget{ToolCalls: 7}) {
		t.Errorf("search budget = %+v", search.Budget)
	}
	writeAgent(t, filepath.Join(dir, "bad.md"), "---\ndescription: d\nbudget: {usd: -1}\n---\nX.\n")
	_, err = LoadRoster(RosterOptions{Config: config.Default(), ConfigDir: root, AgentDirs: []string{dir}})
	if want := "bad: budget: limits must not be negative"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// budget.gate bounds each run of a quality gate: a review over it fails
// the gate, with the limit in the reason (the small-model retry is off).
func TestGateBudgetFailsTheGate(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(llmtest.Call("Write", map[string]string{"path": "{{root}}/a.go", "content": "package a\n"}),
				llmtest.Call("Write", map[string]string{"path": "{{root}}/b.go", "content": "package a\n"})),
			llmtest.Step{When: "wrote", Text: "wrote a.go and b.go"},
		).
		Add("review", llmtest.Calls(llmtest.Call("Grep", map[string]any{"text": "one"})), llmtest.Calls(llmtest.Call("Grep", map[string]any{"text": "two"})))
	h := newHarness(t, s, withConfig(func(c *config.Config) {
		c.Budget.Gate.ToolCalls = 1
		c.Budget.RetrySmall = false
	}))
	h.sess.Submit("write two files", messages.ModeEdit)
	tf, evs := next[messages.TurnFinished](h)
	r := tf.Result
	if r.Status != messages.TurnGateFailed || !strings.Contains(r.Error, "budget_exceeded") {
		t.Fatalf("turn = %s (%s), want the gate failed over its budget", r.Status, r.Error)
	}
	rep := finishedReport(t, evs, "review")
	if rep.Budget == nil || rep.Budget.Scope != messages.ScopeGate || rep.Budget.Limit != messages.LimitToolCalls || !strings.Contains(rep.Summary, "budget.gate.tool_calls") {
		t.Errorf("review report = %+v", rep)
	}
	if n := toolRuns(evs, "review", "Grep"); n != 1 {
		t.Errorf("review's Grep ran %d times, want 1", n)
	}
}

// askOnce lets a paused run go on the first time and refuses the second.
type askOnce struct {
	asked chan policy.Request
	n     int
}

func (a *askOnce) Approve(_ context.Context, req policy.Request) (policy.Decision, error) {
	a.asked <- req
	a.n++
	if a.n == 1 {
		return policy.AllowOnce, nil
	}
	return policy.Reject, nil
}

// In the REPL a runaway is paused and the user asked: let go on, the run
// continues with its counts reset; refused, it is stopped.
func TestRunawayPauseAsksTheUser(t *testing.T) {
	var steps []llmtest.Step
	for range 20 {
		steps = append(steps, llmtest.Calls(llmtest.Call("Echo", map[string]any{"text": "same"})))
	}
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("search", "look", "look around")), llmtest.Reply("stopped")).
		Add("search", steps...)
	ap := &askOnce{asked: make(chan policy.Request, 4)}
	h := newHarness(t, s, func(d *Deps) { d.Approver = ap }, withConfig(func(c *config.Config) { c.Runaway.Identical = 3 }))
	h.sess.Submit("look", messages.ModeAsk)
	_, evs := next[messages.TurnFinished](h)
	if len(ap.asked) != 2 {
		t.Fatalf("asked %d times, want 2", len(ap.asked))
	}
	if req := <-ap.asked; req.Origin.Agent != "search" || !strings.Contains(req.Subject, "same Echo call 3 times") {
		t.Errorf("question = %+v", req)
	}
	r := finishedReport(t, evs, "search")
	if r.Status != messages.ReportNoProgress {
		t.Fatalf("report = %+v", r)
	}
	// Three calls, the pause, three more (the counts start again), stop.
	if n := toolRuns(evs, "search", "Echo"); n != 6 {
		t.Errorf("Echo ran %d times, want 6", n)
	}
}

// A response that only reports is let through even when it crosses the
// budget: the report carries the work done within it, and costs no
// further model call.
func TestReportCrossingTheBudgetIsDelivered(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("search", "look", "look around")), llmtest.Reply("done")).
		Add("search", call1100("Echo", map[string]any{"text": "one"}),
			llmtest.Step{ToolCalls: searchReport("found it").ToolCalls, Usage: &llm.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}})
	var srv *llmtest.Server
	h := newHarness(t, s, pricedHTTP(t, s, config.Price{}, &srv), withConfig(func(c *config.Config) {
		c.Agents = map[string]config.Agent{"search": {Budget: config.Budget{Tokens: 2000}}}
	}))
	h.sess.Submit("look", messages.ModeAsk)
	_, evs := next[messages.TurnFinished](h)
	if r := finishedReport(t, evs, "search"); r.Status != messages.ReportOK || r.Summary != "found it" {
		t.Fatalf("report = %+v, want the report delivered", r)
	}
}

// A resumed session starts its session budget from what it spent before,
// in an earlier process: $0.011 then, $0.011 now, passes $0.015.
func TestResumedSessionKeepsItsSpend(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	s := llmtest.NewScript().Add("orchestrator", llmtest.Step{Text: "first answer", Usage: &llm.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}})
	var srv *llmtest.Server
	h := newHarness(t, s, withStore(st), pricedHTTP(t, s, config.Price{Input: 10, Output: 10}, &srv))
	h.sess.Submit("first question", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnDone {
		t.Fatalf("turn 1 = %+v", r)
	}
	h.close()
	msgs, err := st.Messages(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}

	s2 := llmtest.NewScript().Add("orchestrator", call1100("Echo", map[string]any{"text": "a"}), llmtest.Reply("never"))
	var srv2 *llmtest.Server
	h2 := newHarness(t, s2, func(d *Deps) { d.Store = st }, pricedHTTP(t, s2, config.Price{Input: 10, Output: 10}, &srv2), withConfig(func(c *config.Config) {
		c.Budget.Session.USD = 0.015
	}))
	h2.sess.Close(ctx)
	sess2, err := NewSession(h2.deps, SessionOptions{ID: "s1", History: store.LLMMessages(msgs)})
	if err != nil {
		t.Fatal(err)
	}
	h2.sess = sess2
	sess2.Submit("second question", messages.ModeAsk)
	r := h2.turn()
	if r.Status != messages.TurnBudgetExceeded || r.Budget == nil || r.Budget.Spent < 0.0219 || r.Budget.Spent > 0.0221 {
		t.Fatalf("resumed turn = %s (%s) %+v, want the session's $0.022 over $0.015", r.Status, r.Error, r.Budget)
	}
	if n := len(srv2.RequestsFor("orchestrator")); n != 1 {
		t.Errorf("orchestrator requests = %d, want 1", n)
	}
}

package actors

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// overHTTP makes the harness talk to the scripted server through the real
// OpenAI adapter, so the server sees real concurrent requests.
func overHTTP(t testing.TB, script *llmtest.Script) harnessOpt {
	return func(d *Deps) {
		srv := llmtest.NewServer(t, script, llmtest.WithVars(map[string]string{"root": d.Root}))
		c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL(), MaxRetries: -1})
		d.Models = ModelFunc(func(name string) (Model, error) {
			return Model{Client: c, ID: name + "-model", ContextWindow: 100000}, nil
		})
		httpServers[d] = srv
	}
}

var httpServers = map[*Deps]*llmtest.Server{}

func delegation(agent, desc, brief string) llmtest.ToolCall {
	return llmtest.Call(AgentToolName, map[string]any{"agent": agent, "description": desc, "prompt": brief})
}

func report(v any) llmtest.Step { return llmtest.Calls(llmtest.Call("Report", v)) }

func searchReport(summary string) llmtest.Step {
	return report(map[string]any{"query": "q", "findings": []any{}, "summary": summary, "confidence": 0.9})
}

// Three delegations in one model turn run in parallel: the server holds
// each specialist's first request until all three have arrived.
func TestParallelDelegationsReachTheServerConcurrently(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("search", "find a", "find a"), delegation("search", "find b", "find b"), delegation("search", "find c", "find c")),
			llmtest.Reply("all found"),
		).
		Add("search",
			llmtest.Step{When: "find a", Hold: "a", ToolCalls: searchReport("a found").ToolCalls},
			llmtest.Step{When: "find b", Hold: "b", ToolCalls: searchReport("b found").ToolCalls},
			llmtest.Step{When: "find c", Hold: "c", ToolCalls: searchReport("c found").ToolCalls},
		)
	var srv *llmtest.Server
	h := newHarness(t, s, overHTTP(t, s), func(d *Deps) { srv = httpServers[d] })
	h.sess.Submit("find three things", messages.ModeAsk)
	for _, name := range []string{"a", "b", "c"} {
		if err := srv.WaitHeld(t.Context(), name); err != nil {
			t.Fatalf("request %s never held: delegations did not run concurrently: %v", name, err)
		}
	}
	if n := srv.MaxInFlight(); n < 3 {
		t.Fatalf("MaxInFlight = %d, want >= 3", n)
	}
	for _, name := range []string{"a", "b", "c"} {
		srv.Release(name)
	}
	r := h.turn()
	if r.Status != messages.TurnDone || r.Answer != "all found" {
		t.Fatalf("turn = %+v", r)
	}
	var agents []string
	for _, u := range r.ByAgent {
		agents = append(agents, u.Agent)
	}
	if !slices.Contains(agents, "search") {
		t.Errorf("usage by agent lacks search: %v", agents)
	}
	// The reports reached the Orchestrator's model as tool results.
	reqs := srv.RequestsFor("orchestrator")
	last := reqs[len(reqs)-1].Body.LLMMessages()
	var got []string
	for _, m := range last {
		if m.Role == llm.RoleTool {
			got = append(got, firstLine(strings.TrimPrefix(m.Content, "search specialist finished: ")))
		}
	}
	if len(got) != 3 || !strings.Contains(last[len(last)-1].Content, "c found") {
		t.Errorf("tool results = %q", got)
	}
}

// A specialist past its deadline is stopped and reported as a timeout
// while the others finish normally.
func TestSpecialistTimeout(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("search", "slow", "slow task"), delegation("review", "quick", "quick task")),
			llmtest.Step{When: "timeout", Text: "one timed out"},
		).
		Add("search", llmtest.Step{Hold: "never", Text: "too late"}).
		Add("review", report(map[string]any{"files_reviewed": []string{}, "issues": []any{}, "overall_score": 9, "summary": "fine", "approved": true}))
	h := newHarness(t, s, withConfig(func(c *config.Config) {
		c.Agents = map[string]config.Agent{"search": {Timeout: 300 * time.Millisecond}}
	}))
	h.sess.Submit("go", messages.ModeAsk)
	reports := map[string]messages.Report{}
	for len(reports) < 2 {
		ev, _ := next[messages.AgentFinished](h)
		reports[ev.Report.Agent] = ev.Report
	}
	if r := reports["search"]; r.Status != messages.ReportTimeout {
		t.Errorf("search report = %+v, want timeout", r)
	}
	if r := reports["review"]; r.Status != messages.ReportOK || r.Summary != "fine" {
		t.Errorf("review report = %+v", r)
	}
	if r := h.turn(); r.Answer != "one timed out" {
		t.Fatalf("turn = %+v; unused %v", r, h.client.Unused())
	}
}

// A specialist that crashes (its tool's runtime broke: a Go error; a tool
// that panics only fails its call, see TestRunCallsRecoversPanics) is
// restarted within the limit, then reported failed; the Orchestrator
// keeps serving.
func TestCrashingSpecialistIsRestartedThenReportedFailed(t *testing.T) {
	boom := llmtest.Calls(llmtest.Call("Broken", map[string]any{"text": "x"}))
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("crashy", "crash", "crash please")),
			llmtest.Step{When: "failed", Text: "the crashy agent failed"},
			llmtest.Reply("still here"),
		).
		Add("crashy", boom, boom, boom)
	cfgAgents := func(c *config.Config) {
		c.Agents = map[string]config.Agent{"crashy": {Description: "crashes", Prompt: "You crash.", Tools: []string{"Broken"}}}
	}
	h := newHarness(t, s, withConfig(cfgAgents), func(d *Deps) {
		r, err := LoadRoster(RosterOptions{Config: d.Config, ToolNames: d.Tools.Names()})
		if err != nil {
			t.Fatal(err)
		}
		d.Roster = r
	})
	h.sess.Submit("crash", messages.ModeEdit)
	var restarts []int
	for {
		env := <-h.events
		if ev, ok := env.Event.(messages.AgentRestarted); ok {
			restarts = append(restarts, ev.Restart)
		}
		if ev, ok := env.Event.(messages.AgentFinished); ok {
			if ev.Report.Status != messages.ReportFailed || !strings.Contains(ev.Report.Error, "boom") {
				t.Fatalf("report = %+v", ev.Report)
			}
			break
		}
	}
	if !cmp.Equal(restarts, []int{1, 2}) {
		t.Errorf("restarts = %v, want [1 2]", restarts)
	}
	if n := len(h.client.RequestsFor("crashy")); n != 3 {
		t.Errorf("crashy made %d model calls, want 3 (first run + 2 restarts)", n)
	}
	if r := h.turn(); r.Answer != "the crashy agent failed" {
		t.Fatalf("turn = %+v", r)
	}
	h.sess.Submit("are you alive?", messages.ModeAsk)
	if r := h.turn(); r.Answer != "still here" {
		t.Fatalf("turn = %+v", r)
	}
}

// Ask mode never offers write tools or write-capable specialists, to the
// Orchestrator or to the specialists it starts.
func TestAskModeOffersNothingThatWrites(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("search", "look", "look")), llmtest.Reply("ok")).
		Add("search", searchReport("looked"))
	h := newHarness(t, s)
	h.sess.Submit("what is here?", messages.ModeAsk)
	h.turn()
	req := h.client.RequestsFor("orchestrator")[0]
	orch := append(toolNames(req), agentEnum(t, req)...)
	for _, forbidden := range []string{"Write", "code", "test", "docs", "qa", "RequestReview"} {
		if slices.Contains(orch, forbidden) {
			t.Errorf("ask mode offered %s to the Orchestrator: %v", forbidden, orch)
		}
	}
	for _, want := range []string{"Echo", "agent", "search", "review", "research", "init"} {
		if !slices.Contains(orch, want) {
			t.Errorf("ask mode lacks %s: %v", want, orch)
		}
	}
	search := toolNames(h.client.RequestsFor("search")[0])
	if slices.Contains(search, "Write") || !slices.Contains(search, "Report") {
		t.Errorf("search tools in ask mode = %v", search)
	}
}

// Custom agents from odin.yaml and from .odin/agents/*.md are delegated to
// with exactly their tool lists.
func TestCustomAgentsGetExactlyTheirTools(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "scribe.md"), []byte("---\nname: scribe\ndescription: Writes notes.\ntools: Write, Echo\nmodel: haiku\n---\nYou write notes.\n"), 0o644)
	cfg := config.Default()
	cfg.Agents = map[string]config.Agent{"echoer": {Description: "Echoes.", Prompt: "You echo.", Tools: []string{"Echo", "Slow"}, DisallowedTools: []string{"Slow"}}}
	done := report(map[string]any{"summary": "done"})
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("echoer", "e", "echo it"), delegation("scribe", "s", "note it")), llmtest.Reply("both done")).
		Add("echoer", done).Add("scribe", done)
	h := newHarness(t, s, withConfig(func(c *config.Config) { c.Agents = cfg.Agents }), func(d *Deps) {
		r, err := LoadRoster(RosterOptions{Config: d.Config, AgentDirs: []string{dir}, ToolNames: d.Tools.Names()})
		if err != nil {
			t.Fatal(err)
		}
		d.Roster = r
	})
	h.sess.Submit("use both", messages.ModeEdit)
	if r := h.turn(); r.Answer != "both done" {
		t.Fatalf("turn %+v", r)
	}
	check := func(agent string, want []string) {
		reqs := h.client.RequestsFor(agent)
		if len(reqs) == 0 {
			t.Fatalf("%s was not called", agent)
		}
		got := toolNames(reqs[0])
		sort.Strings(got)
		if !cmp.Equal(got, want) {
			t.Errorf("%s tools: %s", agent, cmp.Diff(want, got))
		}
	}
	check("echoer", []string{"Echo", "Report"})
	check("scribe", []string{"Echo", "Report", "WriteFile"}) // Claude Code's "Write" is WriteFile
	if reqs := h.client.RequestsFor("scribe"); reqs[0].Model != "small-model" {
		t.Errorf("scribe model = %s, want the small model (haiku maps to small)", reqs[0].Model)
	}
	// The body is the agent's role: it goes with the task, after the
	// preamble every specialist shares.
	if m := h.client.RequestsFor("scribe")[0].Messages; !strings.Contains(m[1].Content, "You write notes.") || strings.Contains(m[0].Content, "You write notes.") {
		t.Errorf("scribe's body is not its role before the task: system %q, first %q", m[0].Content, m[1].Content)
	}
}

func TestSpecialistMustReport(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("search", "x", "x")), llmtest.Reply("ok")).
		Add("search", llmtest.Reply("I found it in main.go"), llmtest.Step{When: "not called the Report tool", ToolCalls: searchReport("found in main.go").ToolCalls})
	h := newHarness(t, s)
	h.sess.Submit("x", messages.ModeAsk)
	ev, _ := next[messages.AgentFinished](h)
	if ev.Report.Status != messages.ReportOK || ev.Report.Summary != "found in main.go" || len(ev.Report.Result) == 0 {
		t.Fatalf("report = %+v", ev.Report)
	}
}

func TestRosterErrors(t *testing.T) {
	dir := t.TempDir()
	tools := []string{"ReadFile", "Grep", "WriteFile"}
	cases := []struct {
		name   string
		agents map[string]config.Agent
		file   string
		want   string
	}{
		{"unknown tool", map[string]config.Agent{"x": {Description: "d", Prompt: "p", Tools: []string{"Nope"}}}, "", `odin.yaml: agents.x.tools: unknown tool "Nope"`},
		{"missing prompt", map[string]config.Agent{"x": {Description: "d"}}, "", "odin.yaml: agents.x.prompt: required"},
		{"missing description", map[string]config.Agent{"x": {Prompt: "p"}}, "", "odin.yaml: agents.x.description: required"},
		{"bad name", map[string]config.Agent{"Bad Name": {Description: "d", Prompt: "p"}}, "", "odin.yaml: agents.Bad Name: invalid agent name"},
		{"timeout over max", map[string]config.Agent{"code": {Timeout: time.Hour}}, "", "odin.yaml: agents.code.timeout: 1h0m0s exceeds max_timeout"},
		{"override deny unknown", map[string]config.Agent{"search": {DisallowedTools: []string{"Grp"}}}, "", `agents.search.disallowed_tools: unknown tool "Grp"`},
		{"md bad duration", nil, "---\nname: slow\ndescription: d\ntimeout: forever\n---\nbody\n", `.odin/agents/slow.md:4: slow: timeout: invalid duration "forever"`},
		{"md no front matter", nil, "just text", ".odin/agents/slow.md: slow: missing YAML front matter"},
		{"md unknown key", nil, "---\ndescription: d\ncolour: red\n---\nbody", "field colour not found"},
		{"md empty body", nil, "---\ndescription: d\n---\n", "slow: prompt: the body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Agents = tc.agents
			opts := RosterOptions{Config: cfg, ToolNames: tools}
			if tc.file != "" {
				d := filepath.Join(dir, tc.name, ".odin", "agents")
				os.MkdirAll(d, 0o755)
				os.WriteFile(filepath.Join(d, "slow.md"), []byte(tc.file), 0o644)
				opts.AgentDirs, opts.ConfigDir = []string{d}, filepath.Join(dir, tc.name)
			}
			_, err := LoadRoster(opts)
			var re *RosterError
			if err == nil || !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a RosterError containing %q", err, tc.want)
			}
		})
	}
}

func TestBuiltinRosterMatchesSeed(t *testing.T) {
	r, err := LoadRoster(RosterOptions{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]time.Duration{
		"search": {30 * time.Second, 60 * time.Second}, "research": {45 * time.Second, 120 * time.Second},
		"code": {120 * time.Second, 300 * time.Second}, "review": {60 * time.Second, 120 * time.Second},
		"test": {180 * time.Second, 600 * time.Second}, "docs": {60 * time.Second, 120 * time.Second},
		"qa": {120 * time.Second, 300 * time.Second}, "init": {90 * time.Second, 180 * time.Second},
	}
	if len(r.Agents()) != 8 {
		t.Fatalf("%d built-in agents", len(r.Agents()))
	}
	for name, d := range want {
		a, ok := r.Get(name)
		if !ok || a.Timeout != d[0] || a.MaxTimeout != d[1] {
			t.Errorf("%s: %+v", name, a)
		}
	}
	models := map[string]string{}
	for _, a := range r.Agents() {
		models[a.Name] = a.Model
	}
	for _, main := range []string{"code", "review"} {
		if models[main] != "main" {
			t.Errorf("%s model = %s", main, models[main])
		}
	}
	if models["search"] != "small" || models["qa"] != "small" {
		t.Errorf("models = %v", models)
	}
	if timeoutFor(mustGet(r, "search"), 600) != 60*time.Second || timeoutFor(mustGet(r, "search"), 0) != 30*time.Second {
		t.Errorf("timeoutFor does not cap at the maximum")
	}
}

func mustGet(r *Roster, name string) *AgentDefinition {
	a, _ := r.Get(name)
	return a
}

package present

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
)

type row struct {
	ev    messages.Event
	text  string // Line.Text(), "" for a silent line
	depth int
	round int
	cost  string
	items []string
}

// rows has at least one row for every event kind in messages (checked by
// TestDescribeCoversEveryEventKind).
var rows = []row{
	{ev: messages.InputQueued{Input: messages.UserMessage{Body: "next"}, Position: 1}, depth: 1},
	{ev: messages.InputRemoved{ID: "x"}, depth: 1},
	{ev: messages.TurnStarted{Input: messages.UserMessage{Body: "add rate limiting\nto the API", Images: []messages.Image{{Name: "a.png", MIME: "image/png", Width: 4, Height: 3}}}},
		text: "odin ▸ add rate limiting", items: []string{"[image: a.png 4x3]"}},
	{ev: messages.TextDelta{Text: "hello"}, depth: 1},
	{ev: messages.ReasoningDelta{Text: "hmm"}, depth: 1},
	{ev: messages.Retrying{Origin: messages.Origin{Agent: "orchestrator"}, Attempt: 2, WaitMS: 1500, Error: "502 bad gateway\nbody"},
		text: "… orchestrator: model call failed (502 bad gateway); retry 2 in 1.5s", depth: 1},
	{ev: messages.RateLimited{Origin: messages.Origin{Agent: "search", TaskID: "t1"}, Provider: "openai", WaitMS: 250},
		text: "… search: waiting for rate limit (openai), 250ms", depth: 1},
	{ev: messages.ToolStarted{Origin: messages.Origin{Agent: "orchestrator"}, Name: "ReadFile", Input: `{"file_path":"/p/main.go"}`},
		text: "⏺ ReadFile /p/main.go", depth: 1},
	{ev: messages.ToolStarted{Origin: messages.Origin{Agent: "search", TaskID: "t1"}, Name: "Grep", Input: `{"pattern":"func main"}`},
		text: "⏺ search Grep func main", depth: 2},
	{ev: messages.ToolFinished{Origin: messages.Origin{Agent: "orchestrator"}, Name: "ReadFile", Output: "ok"}, depth: 2},
	{ev: messages.ToolFinished{Origin: messages.Origin{Agent: "orchestrator"}, Name: "ReadFile", IsError: true, Output: "no such file\nmore"},
		text: "⎿ error: no such file", depth: 2},
	{ev: messages.ToolFinished{Origin: messages.Origin{Agent: "code", TaskID: "t2"}, Name: "ExecuteCommand", Denied: true, Output: "Permission denied:\n`rm -rf build`  needs approval"},
		text: "⎿ code denied: Permission denied: `rm -rf build` needs approval", depth: 2},
	{ev: messages.AgentStarted{TaskID: "t1", Agent: "search", Description: "find the handler", Model: "small", Timeout: 5 * time.Minute},
		text: "▸ search find the handler (small, deadline 5m0s)", depth: 1},
	{ev: messages.AgentProgress{TaskID: "t1", Agent: "search", Tokens: 100}, depth: 1},
	{ev: messages.AgentRestarted{TaskID: "t1", Agent: "search", Restart: 1, Reason: "panic: boom"},
		text: "↻ search crashed (panic: boom); restart 1", depth: 1},
	{ev: messages.AgentFinished{Report: messages.Report{TaskID: "t1", Agent: "search", Status: messages.ReportOK, Summary: "found it", Turns: 1,
		Usage: messages.Usage{TotalTokens: 1234, Cost: 0.01}, Elapsed: 3*time.Second + 400*time.Millisecond}},
		text: "✓ search ok: found it (1 call, 1.2k tokens, 3s)", depth: 1, cost: "$0.0100"},
	{ev: messages.AgentFinished{Report: messages.Report{Agent: "review", Status: messages.ReportOK, Summary: "1 major issue", Turns: 2,
		Result: json.RawMessage(`{"approved":false}`), Usage: messages.Usage{CostUnknown: true}}},
		text: "✗ review changes requested: 1 major issue (2 calls, 0 tokens, 0s)", depth: 1, cost: "cost unknown"},
	{ev: messages.AgentFinished{Report: messages.Report{Agent: "code", Status: messages.ReportFailed, Error: "model gave up", Summary: "x",
		Result: json.RawMessage(`{"lint":{"runs":[{"kind":"format","command":"gofmt -l -w a.go","fixed":["a.go"]}]}}`)}},
		text: "✗ code failed: model gave up (0 calls, 0 tokens, 0s)", depth: 1, cost: "$0.0000",
		items: []string{"lint: format `gofmt -l -w a.go` — ok, fixed a.go"}},
	{ev: messages.UsageUpdated{Model: "m", Usage: messages.Usage{Cost: 0.5, CostUnknown: true}}, depth: 1, cost: "$0.5000 + unknown"},
	{ev: messages.TodosUpdated{Todos: []messages.Todo{{ID: "1", Content: "a", Status: "pending"}}}, depth: 1},
	{ev: messages.GateDecided{Decision: messages.GateDecision{Files: []string{"a.go"}}},
		text: "⚖ quality gates: not required (single low-risk change)", depth: 1},
	{ev: messages.GateDecided{Decision: messages.GateDecision{ReviewRequired: true, QARequired: true, Reasons: []string{"3 files changed", "auth/x.go matches a risk path"}}},
		text: "⚖ quality gates: review and QA required", depth: 1, items: []string{"- 3 files changed", "- auth/x.go matches a risk path"}},
	{ev: messages.GateDecided{Decision: messages.GateDecision{QARequired: true}},
		text: "⚖ quality gates: QA required", depth: 1},
	// QA after one fix round: its first run is round 1, not 2; of the
	// most rounds the stage may have (max_fix_rounds 2: QA 3, fix 2).
	{ev: messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "qa", Round: 1, Run: 1, MaxRounds: 3}},
		text: "⚖ qa round 1 of 3: running the project's checks…", depth: 1, round: 1},
	{ev: messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "qa", Round: 1, Run: 1, MaxRounds: 3, Summary: "TestX fails"}, Done: true},
		text: "⚖ qa round 1 of 3: failed — TestX fails", depth: 1, round: 1},
	{ev: messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "fix", Round: 2, Run: 2, MaxRounds: 2, Summary: "fixed TestX"}, Done: true},
		text: "⚖ fix round 2 of 2: applied — fixed TestX", depth: 1, round: 2},
	// A record from before Run and MaxRounds were kept: the fix rounds
	// before it, plus one, and no maximum.
	{ev: messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "review", Round: 1, Passed: true}, Done: true},
		text: "⚖ review round 2: passed", depth: 1, round: 2},
	{ev: messages.Notice{Level: "info", Text: "hook said\nsecond line"}, text: "! hook said", depth: 1, items: []string{"second line"}},
	{ev: messages.ApprovalRequested{ID: "a1", Tool: "ExecuteCommand", Subject: "rm -rf build"},
		text: "! orchestrator asks to run ExecuteCommand rm -rf build", depth: 1},
	{ev: messages.ApprovalResolved{ID: "a1", Decision: "once"}, depth: 1},
	{ev: messages.ElicitationRequested{ID: "e1", Server: "fx", Mode: "form", Message: "Your name?"},
		text: "! MCP server fx asks for input (Your name?)", depth: 1},
	{ev: messages.ElicitationResolved{ID: "e1", Action: "accept"}, depth: 1},
	{ev: messages.Compacted{Messages: 1, TokensBefore: 120_000, TokensAfter: 8_000, Requests: 2},
		text: "⇣ compacted 1 message: 120k → 8.0k tokens (summarised in 2 parts)", depth: 1},
	{ev: messages.TurnFinished{Result: messages.TurnResult{Elapsed: 65 * time.Second, Usage: messages.Usage{PromptTokens: 1500, CompletionTokens: 20, CostUnknown: true}}},
		text: "1m05s · 1.5k in · 20 out · cost unknown", depth: 1, cost: "cost unknown"},
	{ev: messages.TurnFinished{Result: messages.TurnResult{}}, depth: 1, cost: "$0.0000"},
	{ev: messages.Init{SessionID: "s"}, depth: 1},
	{ev: messages.Resync{Dropped: 1}, text: "! the display fell behind: 1 update skipped; the rest of the answer follows when the turn ends", depth: 1},
	{ev: messages.SessionFenced{Epoch: 2, Reason: "another process took this session over"},
		text: "! another process took this session over: open it again to take it back (odin --resume)", depth: 1},
	{ev: messages.BudgetExceeded{Agent: "code", Scope: messages.ScopeAgent, Limit: messages.LimitUSD, Spent: 0.02, Allowed: 0.01},
		text: "■ code stopped: agent usd budget exceeded: spent $0.0200 of $0.0100", depth: 1},
	{ev: messages.BudgetExceeded{Scope: messages.ScopeTurn, Limit: messages.LimitTokens, Spent: 10, Allowed: 5},
		text: "■ turn stopped: turn tokens budget exceeded: spent 10 of 5", depth: 1},
	{ev: messages.NoProgress{Agent: "code", Kind: messages.NoProgressStall, Calls: 8},
		text: "‖ code paused: no progress: code made 8 tool calls without reading a new file, editing one or getting a new test result", depth: 1},
}

func TestDescribe(t *testing.T) {
	for _, r := range rows {
		l := Describe(r.ev)
		got := row{ev: r.ev, text: l.Text(), depth: l.Depth, round: l.Round, cost: l.Cost, items: l.Items}
		if diff := cmp.Diff(r, got, cmp.AllowUnexported(row{}), cmp.Comparer(func(a, b messages.Event) bool { return true })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", r.ev.EventType(), diff)
		}
		if l.Kind == "" || (l.Silent() != (r.text == "")) {
			t.Errorf("%s: kind %q, silent %v", r.ev.EventType(), l.Kind, l.Silent())
		}
	}
}

// TestDescribeCoversEveryEventKind fails when messages gains an event
// kind that rows does not describe: a new event is worded here once, for
// every front end.
func TestDescribeCoversEveryEventKind(t *testing.T) {
	files, err := filepath.Glob("../../messages/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("messages sources: %v", err)
	}
	re := regexp.MustCompile(`\) EventType\(\) string\s*\{\s*return "(\w+)"`)
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.ev.EventType()] = true
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(src, -1) {
			n++
			if !seen[string(m[1])] {
				t.Errorf("event kind %q has no row in TestDescribe", m[1])
			}
		}
	}
	if n < 25 {
		t.Fatalf("found only %d event kinds in messages: the pattern is stale", n)
	}
}

// TestDescribeSanitizes: words from a model or a tool reach every front
// end without control sequences, the viewer's DOM and the terminal alike.
func TestDescribeSanitizes(t *testing.T) {
	evil := "ok\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202e"
	for _, ev := range []messages.Event{
		messages.AgentStarted{Agent: "s\x1b[31m", Description: evil, Model: evil},
		messages.ToolFinished{Denied: true, Output: evil},
		messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "qa\x1b[1m", Summary: evil}, Done: true},
		messages.Notice{Text: evil + "\n" + evil},
	} {
		l := Describe(ev)
		all := l.Text() + strings.Join(l.Items, "")
		if strings.ContainsAny(all, "\x1b\x07\u202e") {
			t.Errorf("%s: control sequence in %q", ev.EventType(), all)
		}
	}
}

func TestFormatters(t *testing.T) {
	for in, want := range map[time.Duration]string{-time.Second: "0s", 0: "0s", 850 * time.Millisecond: "850ms", 12 * time.Second: "12s", 185 * time.Second: "3m05s", 2*time.Hour + 5*time.Minute: "2h05m"} {
		if got := Duration(in); got != want {
			t.Errorf("Duration(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{950: "950", 1234: "1.2k", 34567: "35k", 1_500_000: "1.5M"} {
		if got := Tokens(in); got != want {
			t.Errorf("Tokens(%d) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		usd     float64
		unknown bool
		want    string
	}{{0, false, "$0.0000"}, {0, true, "cost unknown"}, {0.5, true, "$0.5000 + unknown"}, {0.01234, false, "$0.0123"}} {
		if got := Cost(c.usd, c.unknown); got != c.want {
			t.Errorf("Cost(%v, %v) = %q, want %q", c.usd, c.unknown, got, c.want)
		}
	}
	for n, want := range map[int]string{0: "0 fix rounds", 1: "1 fix round", 2: "2 fix rounds"} {
		if got := Plural(n, "fix round"); got != want {
			t.Errorf("Plural(%d) = %q", n, got)
		}
	}
	if got := FixRounds(false, 1); got != "failed after 1 fix round" {
		t.Errorf("FixRounds = %q", got)
	}
}

// A gate stage read back from its stored JSON: one stored before the
// maximum was kept reads as before ("round 2"), one stored with it says
// "of 3", in the event line and in the turn's gate report alike.
func TestStoredGateStageRounds(t *testing.T) {
	for _, c := range []struct {
		name, stored, line, report string
	}{
		{"before max_rounds", `{"stage":"review","round":1,"passed":true,"summary":"fine","run":2,"done":true}`,
			"⚖ review round 2: passed — fine", "review round 2: passed  fine"},
		{"with max_rounds", `{"stage":"review","round":1,"passed":true,"summary":"fine","run":2,"max_rounds":3,"done":true}`,
			"⚖ review round 2 of 3: passed — fine", "review round 2 of 3: passed  fine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ev messages.GateStage
			if err := json.Unmarshal([]byte(c.stored), &ev); err != nil {
				t.Fatal(err)
			}
			if got := Describe(ev).Text(); got != c.line {
				t.Errorf("line = %q, want %q", got, c.line)
			}
			rep := GateReport(&messages.GateReport{Decision: messages.GateDecision{ReviewRequired: true}, Passed: true, Stages: []messages.GateStageResult{ev.GateStageResult}})
			if len(rep) != 2 || rep[1].Text() != c.report || rep[1].Round != 2 {
				var got []string
				for _, l := range rep {
					got = append(got, l.Text())
				}
				t.Errorf("gate report = %q, want its stage row %q (round 2)", got, c.report)
			}
			// Written back, the event keeps what it was read with.
			again, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(again), "max_rounds") != strings.Contains(c.stored, "max_rounds") {
				t.Errorf("stored again as %s", again)
			}
		})
	}
}

// TestToolLabelIn: paths inside the workspace read relative to it, the
// workspace itself as ".", and anything outside it — a sibling sharing
// its name as a prefix, a ".." escape — stays absolute.
func TestToolLabelIn(t *testing.T) {
	cases := []struct{ input, want string }{
		{`{"file_path":"/w/p/a/b.go"}`, "ReadFile a/b.go"},
		{`{"path":"/w/p"}`, "ReadFile ."},
		{`{"path":"/w/p/"}`, "ReadFile ."},
		{`{"file_path":"/w/pp/x.go"}`, "ReadFile /w/pp/x.go"},
		{`{"file_path":"/w/p/../q/x.go"}`, "ReadFile /w/p/../q/x.go"},
		{`{"file_path":"rel/x.go"}`, "ReadFile rel/x.go"},
		{`{"command":"go test /w/p/pkg/... > /tmp/out"}`, "ReadFile go test pkg/... > /tmp/out"},
		{`{"pattern":"/w/p/**/*.go"}`, "ReadFile **/*.go"},
	}
	for _, c := range cases {
		if got := ToolLabelIn("/w/p", "ReadFile", c.input); got != c.want {
			t.Errorf("ToolLabelIn(%s) = %q, want %q", c.input, got, c.want)
		}
	}
	if got := ToolLabel("ReadFile", `{"file_path":"/w/p/a.go"}`); got != "ReadFile /w/p/a.go" {
		t.Errorf("ToolLabel without a root = %q, want the path as given", got)
	}
}

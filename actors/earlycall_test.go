package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// streamGate wraps the Orchestrator's model client: after the stream has
// announced call n done (EventToolCallDone), it runs at(n) before the
// stream goes on, so a test acts while the reply is still streaming.
// noEarly drops the announcements, which makes the Orchestrator take the
// path it took before calls were announced: every call at the reply's end.
type streamGate struct {
	llm.Client
	noEarly bool
	at      func(ctx context.Context, n int, call llm.ToolCall) error
}

func (g *streamGate) Stream(ctx context.Context, req llm.Request, onEvent func(llm.Event)) (*llm.Response, error) {
	if req.Agent != "orchestrator" {
		return g.Client.Stream(ctx, req, onEvent)
	}
	for attempt := 1; ; attempt++ {
		var failed error
		n := 0
		resp, err := g.Client.Stream(ctx, req, func(ev llm.Event) {
			if failed != nil {
				return
			}
			if ev.Kind == llm.EventToolCallDone && g.noEarly {
				return
			}
			onEvent(ev)
			if ev.Kind == llm.EventToolCallDone && g.at != nil {
				failed = g.at(ctx, n, *ev.ToolCall)
				n++
			}
		})
		if errors.Is(failed, errRetryStream) {
			// As the adapter retries: announced, then the next step of
			// the script is the new attempt.
			onEvent(llm.Event{Kind: llm.EventRetry, Retry: &llm.RetryInfo{Attempt: attempt, Err: failed}})
			continue
		}
		if failed != nil {
			return nil, failed
		}
		return resp, err
	}
}

// errRetryStream, returned by a streamGate's at, fails the attempt and
// retries the model call.
var errRetryStream = errors.New("the stream broke; retrying")

// withGate puts g between the Orchestrator and its scripted model.
func withGate(g *streamGate) harnessOpt {
	return func(d *Deps) {
		inner := d.Models
		// Every model of the harness has the one scripted client.
		if m, err := inner.Model("main"); err == nil {
			g.Client = m.Client
		}
		d.Models = ModelFunc(func(name string) (Model, error) {
			m, err := inner.Model(name)
			m.Client = g
			return m, err
		})
	}
}

// runsOf asks the Orchestrator for its runs: the answer comes after every
// message mailed to it before, the calls announced so far included.
func runsOf(ctx context.Context, t *testing.T, h *harness) []messages.AgentRun {
	t.Helper()
	runs, err := h.sess.AgentRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// fanScript: the Orchestrator delegates three searches around an Echo
// call, then answers; each search reports.
func fanScript() *llmtest.Script {
	return llmtest.NewScript().
		Add("orchestrator",
			llmtest.Step{ToolCalls: []llmtest.ToolCall{
				delegation("search", "find a", "find a"),
				llmtest.Call("Echo", map[string]any{"text": "between"}),
				delegation("search", "find b", "find b"),
				delegation("search", "find c", "find c"),
			}},
			llmtest.Step{When: "search specialist finished", Text: "all found"},
		).
		Add("search", when("find a", searchReport("a found")), when("find b", searchReport("b found")), when("find c", searchReport("c found")))
}

// when makes step answer only the request that mentions s.
func when(s string, step llmtest.Step) llmtest.Step {
	step.When = s
	return step
}

// A delegation whose arguments have streamed starts before the reply
// ends: its specialist is running, and even reports, while the
// Orchestrator's stream is held after it.
func TestDelegationStartsWhileTheReplyStreams(t *testing.T) {
	var h *harness
	var during [][]messages.AgentRun
	g := &streamGate{at: func(ctx context.Context, n int, _ llm.ToolCall) error {
		during = append(during, runsOf(ctx, t, h))
		return nil
	}}
	h = newHarness(t, fanScript(), withGate(g))
	h.sess.Submit("fan out", messages.ModeAsk)
	r := h.turn()
	if r.Status != messages.TurnDone || r.Answer != "all found" {
		t.Fatalf("turn = %+v", r)
	}
	if diff := cmp.Diff([]string{"agent", "Echo", "agent", "agent"}, recordNames(r.ToolCalls)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	// Announced done: search a (after Echo began), Echo (not an agent
	// call), search b (after c began). c, the last, ends with the reply.
	if len(during) != 3 {
		t.Fatalf("%d calls announced done, want 3", len(during))
	}
	var got []string
	for _, runs := range during {
		var ds []string
		for _, r := range runs {
			ds = append(ds, r.Description)
		}
		got = append(got, strings.Join(ds, ","))
	}
	if diff := cmp.Diff([]string{"find a", "find a", "find a,find b"}, got); diff != "" {
		t.Errorf("runs while the reply streamed (-want +got):\n%s", diff)
	}
	if n := len(h.client.RequestsFor("search")); n != 3 {
		t.Errorf("%d search requests, want 3: one per call, none twice", n)
	}
	var ended []string
	for _, run := range runsOf(t.Context(), t, h) {
		ended = append(ended, run.Description+" "+string(run.Status))
	}
	if diff := cmp.Diff([]string{"find a ok", "find b ok", "find c ok"}, ended); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

func recordNames(rs []messages.ToolCallRecord) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// storedRun is what a session's store holds after one turn.
type storedRun struct {
	Messages []store.Message
	Children []string
	Runs     []string
	Records  []messages.ToolCallRecord
	Status   messages.TurnStatus
}

// storedSession runs one turn of script against a fresh store and returns
// what the store holds; noEarly takes the reply's-end path. Each agent
// call's stream is held until a report is in, so that reports come back
// while the reply still streams.
func storedSession(t *testing.T, script *llmtest.Script, noEarly bool) storedRun {
	st := openStore(t)
	g := &streamGate{noEarly: noEarly}
	sub, stop := context.WithCancel(context.Background())
	defer stop()
	var finished <-chan messages.Envelope
	g.at = func(ctx context.Context, n int, call llm.ToolCall) error {
		if call.Name != AgentToolName {
			return nil
		}
		for env := range finished {
			if _, ok := env.Event.(messages.AgentFinished); ok {
				return nil
			}
		}
		return errors.New("event stream closed")
	}
	h := newHarness(t, script, withStore(st), withGate(g))
	finished = h.deps.Bus.Subscribe(sub, 1024, true)
	h.sess.Submit("fan out", messages.ModeAsk)
	r := h.turn()
	h.close()
	ctx := t.Context()
	out := storedRun{Records: r.ToolCalls, Status: r.Status}
	var err error
	if out.Messages, err = st.Messages(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	kids, err := st.Children(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		msgs, _ := st.Messages(ctx, k.ID)
		out.Children = append(out.Children, fmt.Sprintf("%s %s %q: %d messages", k.ID, k.Agent, k.Title, len(msgs)))
	}
	recs, err := st.AgentRuns(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		var run messages.AgentRun
		if err := json.Unmarshal(rec.Data, &run); err != nil {
			t.Fatal(err)
		}
		out.Runs = append(out.Runs, fmt.Sprintf("%s %s %s %s %q", run.ID, run.Handle, run.Agent, run.Status, run.Summary))
	}
	return out
}

var storedIgnore = cmp.Options{
	cmpopts.IgnoreFields(store.Message{}, "ID", "CreatedAt", "UpdatedAt"),
	cmpopts.IgnoreFields(store.FinishPart{}, "Time"),
	cmpopts.EquateEmpty(),
}

// The store holds the same session whether calls start while the reply
// streams or at its end: the same messages in the same order (the reply,
// then every result in call order), the same child sessions and runs,
// with the specialists' reports in before the reply has ended.
func TestEarlyDelegationStoresWhatTheReplysEndDid(t *testing.T) {
	before, early := storedSession(t, fanScript(), true), storedSession(t, fanScript(), false)
	if len(before.Messages) != 7 || before.Status != messages.TurnDone {
		t.Fatalf("stored %d messages at the reply's end (%s), want 7 (user, reply, 4 results, answer)", len(before.Messages), before.Status)
	}
	if diff := cmp.Diff(before, early, storedIgnore); diff != "" {
		t.Errorf("stored session, reply's end vs while streaming (-before +early):\n%s", diff)
	}
}

// A reply cut off by the output limit ends with a call whose arguments
// are not whole: the calls before it start early, and the cut one gets the
// same tool error as before, in the same stored session.
func TestTruncatedCallAnsweredAsBefore(t *testing.T) {
	script := func() *llmtest.Script {
		return llmtest.NewScript().
			Add("orchestrator",
				llmtest.Step{FinishReason: "length", ToolCalls: []llmtest.ToolCall{
					delegation("search", "find a", "find a"),
					delegation("search", "find b", "find b"),
					{Name: AgentToolName, Arguments: llmtest.RawArgs(`{"agent": "search", "description": "find c", "prom`)},
				}},
				llmtest.Step{When: "search specialist finished", Text: "two found"},
			).
			Add("search", when("find a", searchReport("a found")), when("find b", searchReport("b found")))
	}
	before, early := storedSession(t, script(), true), storedSession(t, script(), false)
	if len(before.Messages) != 6 || before.Status != messages.TurnDone {
		t.Fatalf("stored %d messages at the reply's end (%s), want 6", len(before.Messages), before.Status)
	}
	if !strings.Contains(before.Messages[4].Text()+fmt.Sprint(before.Messages[4].Parts), "Error") {
		t.Errorf("the cut call's result = %+v, want a tool error", before.Messages[4].Parts)
	}
	if diff := cmp.Diff(before, early, storedIgnore); diff != "" {
		t.Errorf("stored session, reply's end vs while streaming (-before +early):\n%s", diff)
	}
}

// awaitRequests waits until the scripted model has had n requests of agent.
func awaitRequests(ctx context.Context, h *harness, agent string, n int) error {
	for len(h.client.RequestsFor(agent)) < n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// The model call fails after a specialist started early: the specialist
// is stopped (its model call cancelled, its run stopped, nothing left
// running) and the turn fails as it did; the call never runs twice.
func TestFailedReplyStopsWhatItStarted(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var h *harness
	g := &streamGate{at: func(ctx context.Context, n int, _ llm.ToolCall) error {
		if err := awaitRequests(ctx, h, "search", 1); err != nil {
			return err
		}
		return &llm.Error{Kind: llm.KindServer, Message: "the provider fell over mid-reply"}
	}}
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("search", "find a", "find a"), delegation("search", "find b", "find b"))).
		Add("search", llmtest.Step{Hold: "never", ToolCalls: searchReport("late").ToolCalls})
	h = newHarness(t, s, withGate(g))
	h.sess.Submit("fan out", messages.ModeAsk)
	r := h.turn()
	if r.Status != messages.TurnFailed || !strings.Contains(r.Error, "fell over") {
		t.Fatalf("turn = %+v", r)
	}
	var runs []string
	for _, run := range runsOf(t.Context(), t, h) {
		runs = append(runs, run.Description+" "+string(run.Status))
	}
	if diff := cmp.Diff([]string{"find a stopped"}, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if n := len(h.client.RequestsFor("search")); n != 1 {
		t.Errorf("%d search requests, want 1", n)
	}
	h.close()
}

// A retried model call voids what its failed attempt streamed: the
// specialist it started is stopped, and the calls of the attempt that
// succeeds start theirs; the reply stored is the retry's.
func TestRetriedReplyStopsWhatItsAttemptStarted(t *testing.T) {
	var h *harness
	g := &streamGate{}
	g.at = func(ctx context.Context, n int, call llm.ToolCall) error {
		if call.ID != "call_orchestrator_0_0" {
			return nil
		}
		if err := awaitRequests(ctx, h, "search", 1); err != nil {
			return err
		}
		return errRetryStream
	}
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("search", "find a", "find a"), delegation("search", "find b", "find b")),
			llmtest.Calls(delegation("search", "find a", "find a"), delegation("search", "find b", "find b")),
			llmtest.Step{When: "search specialist finished", Text: "both found"},
		).
		Add("search",
			when("find a", llmtest.Step{Hold: "never", ToolCalls: searchReport("late").ToolCalls}),
			when("find a", searchReport("a found")), when("find b", searchReport("b found")))
	h = newHarness(t, s, withGate(g))
	h.sess.Submit("fan out", messages.ModeAsk)
	r := h.turn()
	if r.Status != messages.TurnDone || r.Answer != "both found" {
		t.Fatalf("turn = %+v; unused %v", r, h.client.Unused())
	}
	var runs []string
	for _, run := range runsOf(t.Context(), t, h) {
		runs = append(runs, run.Description+" "+string(run.Status))
	}
	if diff := cmp.Diff([]string{"find a stopped", "find a ok", "find b ok"}, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	var ids []string
	for _, rec := range r.ToolCalls {
		ids = append(ids, rec.ID)
	}
	if diff := cmp.Diff([]string{"call_orchestrator_1_0", "call_orchestrator_1_1"}, ids); diff != "" {
		t.Errorf("the turn's calls (-want +got):\n%s", diff)
	}
	last := h.client.RequestsFor("orchestrator")[2]
	var answered []string
	for _, m := range last.Messages {
		if m.Role == llm.RoleTool {
			answered = append(answered, m.ToolCallID+": "+firstLine(m.Content))
		}
	}
	want := []string{
		"call_orchestrator_1_0: search specialist finished: status ok (run search-2, 1 model calls, 0 tokens).",
		"call_orchestrator_1_1: search specialist finished: status ok (run search-3, 1 model calls, 0 tokens).",
	}
	if diff := cmp.Diff(want, answered, cmpopts.AcyclicTransformer("tokens", func(s string) string {
		i := strings.Index(s, " model calls")
		if i < 0 {
			return s
		}
		return s[:i]
	})); diff != "" {
		t.Errorf("results the model got (-want +got):\n%s", diff)
	}
}

// Cancelling the turn while the reply streams stops the specialists it
// started early, and leaves nothing running.
func TestCancelMidStreamStopsEarlyRuns(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var h *harness
	g := &streamGate{at: func(ctx context.Context, n int, _ llm.ToolCall) error {
		if err := awaitRequests(ctx, h, "search", 1); err != nil {
			return err
		}
		h.sess.Cancel("")
		<-ctx.Done()
		return ctx.Err()
	}}
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("search", "find a", "find a"), delegation("search", "find b", "find b"))).
		Add("search", llmtest.Step{Hold: "never", ToolCalls: searchReport("late").ToolCalls})
	h = newHarness(t, s, withGate(g))
	h.sess.Submit("fan out", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnCancelled {
		t.Fatalf("turn = %+v", r)
	}
	var runs []string
	for _, run := range runsOf(t.Context(), t, h) {
		runs = append(runs, run.Description+" "+string(run.Status))
	}
	if diff := cmp.Diff([]string{"find a stopped"}, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	h.close()
}

// Only delegations that cannot be told from the reply's end start early:
// not a writer, not a forked or scoped context, not a background run, not
// a resumed run, not an invalid call; and once one waits for the reply's
// end, every later one does, so delegations start in call order.
func TestOnlySafeDelegationsStartEarly(t *testing.T) {
	search := func(extra map[string]any) llmtest.ToolCall {
		args := map[string]any{"agent": "search", "description": "look", "prompt": "look"}
		for k, v := range extra {
			args[k] = v
		}
		return llmtest.Call(AgentToolName, args)
	}
	for name, first := range map[string]llmtest.ToolCall{
		"writer":     delegation("code", "change it", "change the file"),
		"fork":       search(map[string]any{"context": "fork"}),
		"scoped":     search(map[string]any{"context": "scoped"}),
		"background": search(map[string]any{"run_in_background": true}),
		"resume":     search(map[string]any{"resume": "search-1"}),
		"invalid":    search(map[string]any{"prompt": " "}),
	} {
		t.Run(name, func(t *testing.T) {
			var h *harness
			var during []int
			g := &streamGate{at: func(ctx context.Context, n int, _ llm.ToolCall) error {
				during = append(during, len(runsOf(ctx, t, h)))
				if n == 1 {
					return &llm.Error{Kind: llm.KindServer, Message: "enough"}
				}
				return nil
			}}
			s := llmtest.NewScript().Add("orchestrator", llmtest.Calls(first, delegation("search", "safe", "look"), delegation("search", "last", "look")))
			h = newHarness(t, s, withGate(g))
			h.sess.Submit("change", messages.ModeEdit)
			if r := h.turn(); r.Status != messages.TurnFailed {
				t.Fatalf("turn = %+v", r)
			}
			if diff := cmp.Diff([]int{0, 0}, during); diff != "" {
				t.Errorf("runs started while the reply streamed (-want +got):\n%s", diff)
			}
		})
	}
}

// SubagentStart hooks run once for each delegation, early or not, before
// it starts; a delegation a hook refuses never starts, and the model gets
// the refusal as before.
func TestSubagentStartHookGatesEarlyDelegations(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "hooks.log")
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("search", "find a", "find a"), delegation("search", "forbidden b", "forbidden b"), delegation("search", "find c", "find c")),
			llmtest.Step{When: "search specialist finished", Text: "two found"},
		).
		Add("search", when("find a", searchReport("a found")), when("find c", searchReport("c found")))
	h := newHarness(t, s, withHooks(t, map[string][]config.Hook{
		"SubagentStart": {{Command: `input=$(cat); echo "$input" | tr -d '\n' >> ` + logFile + `; echo >> ` + logFile + `; case "$input" in *forbidden*) echo "not that one" >&2; exit 2;; esac`}},
	}))
	h.sess.Submit("fan out", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnDone || r.Answer != "two found" {
		t.Fatalf("turn = %+v; unused %v", r, h.client.Unused())
	}
	for _, req := range h.client.RequestsFor("search") {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "forbidden") {
				t.Fatalf("the refused delegation reached the model: %q", m.Content)
			}
		}
	}
	if n := len(h.client.RequestsFor("search")); n != 2 {
		t.Errorf("%d search requests, want 2", n)
	}
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	var hooked []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		for _, p := range []string{"find a", "forbidden b", "find c"} {
			if strings.Contains(line, p) {
				hooked = append(hooked, p)
			}
		}
	}
	slices.Sort(hooked)
	if diff := cmp.Diff([]string{"find a", "find c", "forbidden b"}, hooked); diff != "" {
		t.Errorf("hooks run (-want +got):\n%s", diff)
	}
	last := h.client.RequestsFor("orchestrator")[1]
	found := false
	for _, m := range last.Messages {
		if m.Role == llm.RoleTool && m.ToolCallID == "call_orchestrator_0_1" {
			found = strings.Contains(m.Content, "a SubagentStart hook refused this delegation: not that one")
		}
	}
	if !found {
		t.Errorf("the refused call's result is not the hook's refusal")
	}
}

// A specialist started while the reply streams may fail before the reply
// ends: the turn's record of its call still says so.
func TestEarlyFailureMarksItsRecord(t *testing.T) {
	boom := llmtest.Calls(llmtest.Call("Broken", map[string]any{"text": "x"}))
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("crashy", "crash", "crash please"), delegation("search", "find c", "find c")),
			llmtest.Step{When: "search specialist finished", Text: "one failed"},
		).
		Add("crashy", boom, boom, boom).
		Add("search", searchReport("c found"))
	var finished <-chan messages.Envelope
	g := &streamGate{at: func(ctx context.Context, n int, _ llm.ToolCall) error {
		for env := range finished {
			if f, ok := env.Event.(messages.AgentFinished); ok && f.Report.Agent == "crashy" {
				return nil
			}
		}
		return errors.New("event stream closed")
	}}
	h := newHarness(t, s, withGate(g), func(d *Deps) {
		d.Config.Agents = map[string]config.Agent{"crashy": {Description: "crashes", Prompt: "You crash.", Tools: []string{"Broken"}}}
		r, err := LoadRoster(RosterOptions{Config: d.Config, ToolNames: d.Tools.Names()})
		if err != nil {
			t.Fatal(err)
		}
		d.Roster = r
	})
	sub, stop := context.WithCancel(context.Background())
	defer stop()
	finished = h.deps.Bus.Subscribe(sub, 1024, true)
	h.sess.Submit("crash", messages.ModeAsk)
	r := h.turn()
	if r.Status != messages.TurnDone || r.Answer != "one failed" {
		t.Fatalf("turn = %+v; unused %v", r, h.client.Unused())
	}
	var got []string
	for _, rec := range r.ToolCalls {
		got = append(got, fmt.Sprintf("%s error=%v", rec.ID, rec.IsError))
	}
	if diff := cmp.Diff([]string{"call_orchestrator_0_0 error=true", "call_orchestrator_0_1 error=false"}, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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
	if failed != nil {
		return nil, failed
	}
	return resp, err
}

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
}

func recordNames(rs []messages.ToolCallRecord) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// The store holds the same session whether calls start while the reply
// streams or at its end: the same messages in the same order (the reply,
// then every result in call order), the same child sessions and runs.
// The specialists' reports arrive here before the reply has ended.
func TestEarlyDelegationStoresWhatTheReplysEndDid(t *testing.T) {
	type stored struct {
		Messages []store.Message
		Children []string
		Runs     []string
		Records  []messages.ToolCallRecord
	}
	run := func(noEarly bool) stored {
		st := openStore(t)
		var h *harness
		g := &streamGate{noEarly: noEarly}
		sub, stop := context.WithCancel(context.Background())
		defer stop()
		var finished <-chan messages.Envelope
		g.at = func(ctx context.Context, n int, call llm.ToolCall) error {
			if call.Name != AgentToolName {
				return nil
			}
			// Hold the reply until this call's report is in.
			for env := range finished {
				if f, ok := env.Event.(messages.AgentFinished); ok && strings.Contains(f.Report.Summary, "found") {
					return nil
				}
			}
			return errors.New("event stream closed")
		}
		h = newHarness(t, fanScript(), withStore(st), withGate(g))
		finished = h.deps.Bus.Subscribe(sub, 1024, true)
		h.sess.Submit("fan out", messages.ModeAsk)
		r := h.turn()
		if r.Status != messages.TurnDone {
			t.Fatalf("turn = %+v", r)
		}
		h.close()
		ctx := t.Context()
		var out stored
		out.Records = r.ToolCalls
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
	before, early := run(true), run(false)
	if len(before.Messages) != 7 {
		t.Fatalf("stored %d messages at the reply's end, want 7 (user, reply, 4 results, answer)", len(before.Messages))
	}
	ignore := cmp.Options{
		cmpopts.IgnoreFields(store.Message{}, "ID", "CreatedAt", "UpdatedAt"),
		cmpopts.IgnoreFields(store.FinishPart{}, "Time"),
		cmpopts.EquateEmpty(),
	}
	if diff := cmp.Diff(before, early, ignore); diff != "" {
		t.Errorf("stored session, reply's end vs while streaming (-before +early):\n%s", diff)
	}
}

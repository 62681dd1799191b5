package actors

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

func ledger(t *testing.T, st store.Store) store.Inputs {
	t.Helper()
	ix, ok := st.(store.Inputs)
	if !ok {
		t.Fatalf("%T keeps no input ledger", st)
	}
	return ix
}

// An input accepted under a key is stored under it, its final reply marks
// it done, and the same key accepted again runs nothing and answers with
// the first input, done.
func TestAcceptIsIdempotentAndTheFinalReplyMarksDone(t *testing.T) {
	st := openStore(t)
	s := llmtest.NewScript().Add("orchestrator", llmtest.Reply("the answer"))
	h := newHarness(t, s, withStore(st))
	ctx := t.Context()
	acc, err := h.sess.Accept(ctx, "key-1", "the question", messages.ModeAsk, nil)
	if err != nil || acc.Dup || acc.Input.ID != "key-1" || acc.State != store.InputAccepted {
		t.Fatalf("Accept = %+v, %v", acc, err)
	}
	if r := h.turn(); r.Answer != "the answer" || r.Input.ID != "key-1" {
		t.Fatalf("turn = %+v", r)
	}
	// turn_finished comes once the turn's writes are committed.
	in, err := ledger(t, st).Input(ctx, "s1", "key-1")
	if err != nil || in.State != store.InputDone {
		t.Fatalf("input after the turn: %+v, %v; want done", in, err)
	}
	all, err := st.AllMessages(ctx, "s1")
	if err != nil || len(all) != 2 || all[0].InputID != "key-1" {
		t.Fatalf("stored messages: %+v, %v", all, err)
	}

	again, err := h.sess.Accept(ctx, "key-1", "the question, sent again", messages.ModeAsk, nil)
	if err != nil || !again.Dup || again.State != store.InputDone || again.Input.Body != "the question" {
		t.Fatalf("repeated Accept = %+v, %v; want the first input, done, dup", again, err)
	}
	h.close()
	if n := len(h.client.RequestsFor("orchestrator")); n != 1 {
		t.Errorf("%d model requests, want 1: the repeated input must not run", n)
	}
	if after, _ := st.AllMessages(ctx, "s1"); len(after) != len(all) {
		t.Errorf("the repeated input stored %d messages more", len(after)-len(all))
	}
}

// A turn cut off by the session's close stays accepted; the next open
// resumes it from the stored history (the user message is not added
// again) and its final reply marks it done. A turn the user cancels is
// over and is not resumed.
func TestClosedMidTurnIsResumedOnOpen(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "long question", Hold: "slow", Text: "never sent"},
		llmtest.Step{When: "cancelled question", Hold: "slow2", Text: "never sent either"},
	)
	h := newHarness(t, s, withStore(st))
	if _, err := h.sess.Accept(ctx, "key-long", "long question", messages.ModeAsk, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.client.WaitHeld(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	if err := h.sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ix := ledger(t, st)
	pending, err := ix.PendingInputs(ctx, "s1")
	if err != nil || len(pending) != 1 || pending[0].ID != "key-long" {
		t.Fatalf("pending after the close: %+v, %v", pending, err)
	}

	rec, err := RecoverInputs(ctx, st, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Inputs) != 1 || !rec.Inputs[0].Resumed || rec.Inputs[0].ID != "key-long" {
		t.Fatalf("recovery = %+v", rec)
	}
	msgs, err := st.Messages(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	s2 := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "long question", Text: "the long answer"},
		llmtest.Step{When: "cancelled question", Hold: "held", Text: "x"},
	)
	h2 := newHarness(t, s2, func(d *Deps) { d.Store = st })
	h2.sess.Close(ctx)
	sess2, err := NewSession(h2.deps, SessionOptions{ID: "s1", History: store.LLMMessages(msgs)})
	if err != nil {
		t.Fatal(err)
	}
	h2.sess = sess2
	sess2.Resume(rec)
	if r := h2.turn(); r.Answer != "the long answer" || !r.Input.Resumed {
		t.Fatalf("resumed turn = %+v", r)
	}
	req := h2.client.RequestsFor("orchestrator")[0]
	asked := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser && strings.Contains(m.Content, "long question") {
			asked++
		}
	}
	if asked != 1 {
		t.Errorf("the resumed request holds the question %d times, want once", asked)
	}
	if in, err := ix.Input(ctx, "s1", "key-long"); err != nil || in.State != store.InputDone {
		t.Errorf("resumed input after its turn: %+v, %v; want done", in, err)
	}

	// Cancelled by the user: over, not to be resumed.
	if _, err := sess2.Accept(ctx, "key-cancel", "cancelled question", messages.ModeAsk, nil); err != nil {
		t.Fatal(err)
	}
	if err := h2.client.WaitHeld(ctx, "held"); err != nil {
		t.Fatal(err)
	}
	sess2.Cancel("the user changed their mind")
	if r := h2.turn(); r.Status != messages.TurnCancelled {
		t.Fatalf("cancelled turn = %+v", r)
	}
	if in, err := ix.Input(ctx, "s1", "key-cancel"); err != nil || in.State != store.InputDone {
		t.Errorf("input cancelled by the user: %+v, %v; want done", in, err)
	}
}

// A queued input the user removes is over: it is not pending in the
// ledger, so the next open does not run it (it did: `odin -c` answered
// "resuming an interrupted turn" and ran the removed input).
func TestRemovedQueuedInputIsNotResumed(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	s := llmtest.NewScript().Add("orchestrator", llmtest.Step{Text: "first", Hold: "first"})
	h := newHarness(t, s, withStore(st))
	if _, err := h.sess.Accept(ctx, "key-run", "the running one", messages.ModeAsk, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.client.WaitHeld(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.sess.Accept(ctx, "key-drop", "the removed one", messages.ModeAsk, nil); err != nil {
		t.Fatal(err)
	}
	if q, err := h.sess.Remove(ctx, "key-drop"); err != nil || len(q.Queued) != 0 {
		t.Fatalf("after remove: %+v, %v", q, err)
	}
	h.client.Release("first")
	if r := h.turn(); r.Input.ID != "key-run" {
		t.Fatalf("turn = %+v", r)
	}
	if err := h.sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	pending, err := ledger(t, st).PendingInputs(ctx, "s1")
	if err != nil || len(pending) != 0 {
		t.Fatalf("pending after the close: %+v, %v; want none", pending, err)
	}
	rec, err := RecoverInputs(ctx, st, "s1")
	if err != nil || len(rec.Inputs) != 0 {
		t.Fatalf("recovery = %+v, %v; want nothing to resume", rec, err)
	}
}

// Closing the session with an input queued behind the running turn does
// not start it: it started, sent its model request and was cancelled a
// moment later (a fast server answered it while Odin exited, and that
// answer was then taken for the cut turn's). It stays accepted, with no
// user message, and the next open runs it after the cut turn.
func TestCloseDoesNotStartQueuedInputs(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "the running one", Text: "never sent", Hold: "slow"},
		llmtest.Step{When: "the queued one", Text: "answered while closing"},
	)
	h := newHarness(t, s, withStore(st))
	if _, err := h.sess.Accept(ctx, "key-run", "the running one", messages.ModeAsk, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.client.WaitHeld(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.sess.Accept(ctx, "key-queued", "the queued one", messages.ModeAsk, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(h.client.RequestsFor("orchestrator")); n != 1 {
		t.Errorf("%d model requests, want 1: the queued input must not start while the session closes", n)
	}
	all, err := st.AllMessages(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if m.InputID == "key-queued" {
			t.Errorf("the queued input's message was stored at close: %+v", m)
		}
	}
	rec, err := RecoverInputs(ctx, st, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range rec.Inputs {
		got = append(got, in.ID)
	}
	if want := []string{"key-run", "key-queued"}; !cmp.Equal(got, want) {
		t.Errorf("inputs to resume %v, want %v", got, want)
	}
}

// RecoverInputs decides per accepted input from what is stored after its
// user message.
func TestRecoverInputs(t *testing.T) {
	stop := store.FinishPart{Reason: llm.FinishStop, Time: time.Unix(1, 0)}
	asst := func(parts ...store.Part) store.Message {
		return store.Message{Role: llm.RoleAssistant, Parts: parts}
	}
	text := store.TextPart{Text: "some text"}
	call := store.ToolCallPart{ID: "c1", Name: "LS", Input: "{}", Finished: true}
	for _, tc := range []struct {
		name string
		// after are the messages stored after the input's user message;
		// nil means no user message was stored.
		after           []store.Message
		wantResumed     []bool // per recovered input
		wantInterrupted int
		wantFinished    int
		wantPending     int
	}{
		{name: "never started", after: nil, wantResumed: []bool{false}, wantPending: 1},
		{name: "user message only", after: []store.Message{}, wantResumed: []bool{true}, wantPending: 1},
		{name: "partial reply", after: []store.Message{asst(text)}, wantResumed: []bool{true}, wantInterrupted: 1, wantPending: 1},
		{name: "reply cut with an error", after: []store.Message{asst(text, store.FinishPart{Reason: finishError})}, wantResumed: []bool{true}, wantInterrupted: 1, wantPending: 1},
		{name: "final reply stored", after: []store.Message{asst(text, stop)}, wantFinished: 1},
		{name: "tool results stored", after: []store.Message{asst(call, store.FinishPart{Reason: llm.FinishToolCalls}),
			{Role: llm.RoleTool, Parts: []store.Part{store.ToolResultPart{ToolCallID: "c1", Name: "LS", Content: "a.go"}}}},
			wantResumed: []bool{true}, wantPending: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			ctx := t.Context()
			if _, err := st.CreateSession(ctx, store.Session{ID: "s1", Project: "/p"}); err != nil {
				t.Fatal(err)
			}
			ix := ledger(t, st)
			if _, _, err := ix.AcceptInput(ctx, store.Input{ID: "in", SessionID: "s1", Body: "the question", Mode: "ask"}); err != nil {
				t.Fatal(err)
			}
			if tc.after != nil {
				if _, err := st.AppendMessage(ctx, store.Message{SessionID: "s1", Role: llm.RoleUser, InputID: "in",
					Parts: []store.Part{store.TextPart{Text: "the question"}}}); err != nil {
					t.Fatal(err)
				}
			}
			for _, m := range tc.after {
				m.SessionID = "s1"
				if _, err := st.AppendMessage(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			rec, err := RecoverInputs(ctx, st, "s1")
			if err != nil {
				t.Fatal(err)
			}
			var resumed []bool
			for _, in := range rec.Inputs {
				if in.ID != "in" || in.Body != "the question" || in.Mode != messages.ModeAsk {
					t.Errorf("recovered input %+v", in)
				}
				resumed = append(resumed, in.Resumed)
			}
			if diff := cmp.Diff(tc.wantResumed, resumed); diff != "" {
				t.Errorf("recovered inputs' Resumed (-want +got):\n%s", diff)
			}
			if rec.Interrupted != tc.wantInterrupted || rec.Finished != tc.wantFinished {
				t.Errorf("interrupted %d finished %d, want %d and %d", rec.Interrupted, rec.Finished, tc.wantInterrupted, tc.wantFinished)
			}
			pending, err := ix.PendingInputs(ctx, "s1")
			if err != nil || len(pending) != tc.wantPending {
				t.Errorf("pending after recovery: %+v, %v; want %d", pending, err, tc.wantPending)
			}
			view, err := st.Messages(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range view {
				if m.Interrupted {
					t.Errorf("the model's view holds the interrupted message %+v", m)
				}
			}
			// A second open finds nothing new to mark.
			again, err := RecoverInputs(ctx, st, "s1")
			if err != nil || again.Interrupted != 0 || again.Finished != 0 {
				t.Errorf("second recovery = %+v, %v", again, err)
			}
		})
	}
}

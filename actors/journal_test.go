package actors

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func withStore(st store.Store) harnessOpt {
	return func(d *Deps) {
		d.Store = st
		if _, err := st.CreateSession(context.Background(), store.Session{ID: "s1", Project: d.Root, Agent: "orchestrator"}); err != nil {
			panic(err)
		}
	}
}

// A session is written as it happens: messages, the specialist's child
// transcript, usage and tool history; resuming it sends the old turns.
func TestSessionIsPersistedAndResumable(t *testing.T) {
	st := openStore(t)
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(llmtest.Call("Echo", map[string]any{"text": "hi"}), delegation("search", "look", "look around")),
			llmtest.Reply("first answer"),
		).
		Add("search", searchReport("nothing special"))
	h := newHarness(t, s, withStore(st))
	h.sess.Submit("first question", messages.ModeAsk)
	h.turn()
	h.close() // flushes the journal

	ctx := t.Context()
	sess, err := st.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Title != "first question" || sess.PromptTokens == 0 {
		t.Errorf("session = %+v", sess)
	}
	msgs, err := st.Messages(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,tool,assistant" {
		t.Errorf("stored roles = %s", got)
	}
	kids, err := st.Children(ctx, "s1")
	if err != nil || len(kids) != 1 || kids[0].Agent != "search" {
		t.Fatalf("children = %+v, %v", kids, err)
	}
	kmsgs, _ := st.Messages(ctx, kids[0].ID)
	if len(kmsgs) < 3 || kmsgs[0].Text() != "look around" {
		t.Errorf("child transcript = %d messages", len(kmsgs))
	}
	hist, _ := st.ToolHistory(ctx, "s1")
	if len(hist) != 1 || hist[0].Name != "Echo" || hist[0].Output != "echo: hi" {
		t.Errorf("tool history = %+v", hist)
	}

	// Resume: the history goes back to the model before the new question.
	s2 := llmtest.NewScript().Add("orchestrator", llmtest.Step{When: "second question", Text: "second answer"})
	history := store.LLMMessages(msgs)
	h2 := newHarness(t, s2, func(d *Deps) { d.Store = st })
	h2.sess.Close(ctx)
	sess2, err := NewSession(h2.deps, SessionOptions{ID: "s1", History: history})
	if err != nil {
		t.Fatal(err)
	}
	h2.sess = sess2
	sess2.Submit("second question", messages.ModeAsk)
	if r := h2.turn(); r.Answer != "second answer" {
		t.Fatalf("resumed turn = %+v", r)
	}
	req := h2.client.RequestsFor("orchestrator")[0]
	var texts []string
	for _, m := range conversation(req) {
		if m.Role == llm.RoleUser || (m.Role == llm.RoleAssistant && m.Content != "") {
			texts = append(texts, m.Content)
		}
	}
	if got := strings.Join(texts, "|"); got != "first question|first answer|second question" {
		t.Errorf("resumed request carried %q", got)
	}
}

// A reply is stored at its first delta and updated as it streams; cut
// short, it keeps what streamed with a cancelled finish, and the calls it
// had announced get cancelled results (seed 002).
func TestStreamingReplyIsStoredAndCancelled(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	if _, err := st.CreateSession(ctx, store.Session{ID: "s1", Project: "/p", Agent: "orchestrator"}); err != nil {
		t.Fatal(err)
	}
	j := newJournal(st, zerolog.Nop())
	r := j.startReply("s1", "m", time.Unix(1, 0))
	r.event(llm.Event{Kind: llm.EventText, Text: "Looking at "})
	j.flush(t)
	if got := storedTexts(t, st); got != "assistant:Looking at " {
		t.Fatalf("after the first delta the store has %q", got)
	}
	r.event(llm.Event{Kind: llm.EventText, Text: strings.Repeat("x", streamFlushBytes)})
	r.event(llm.Event{Kind: llm.EventToolCall, ToolCall: &llm.ToolCall{ID: "c1", Name: "Grep"}})
	am, results, ok := r.cut(finishCancelled, time.Unix(2, 0))
	if !ok || len(am.ToolCalls) != 1 || len(results) != 1 || !results[0].cancelled {
		t.Fatalf("cut = %+v %+v %v", am, results, ok)
	}
	j.appendResult("s1", results[0], time.Unix(2, 0))
	r.event(llm.Event{Kind: llm.EventText, Text: "after the cut"}) // ignored
	j.close()
	msgs, err := st.AllMessages(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("stored %d messages, want the reply and its cancelled result", len(msgs))
	}
	reply := msgs[0]
	if !strings.HasPrefix(reply.Text(), "Looking at xxx") || strings.Contains(reply.Text(), "after the cut") {
		t.Errorf("reply text = %q", shorten(reply.Text(), 40))
	}
	var finish llm.FinishReason
	var call store.ToolCallPart
	for _, p := range reply.Parts {
		switch v := p.(type) {
		case store.FinishPart:
			finish = v.Reason
		case store.ToolCallPart:
			call = v
		}
	}
	if finish != finishCancelled || call.ID != "c1" || call.Finished {
		t.Errorf("finish %q, call %+v", finish, call)
	}
	res, ok := msgs[1].Parts[0].(store.ToolResultPart)
	if !ok || !res.Cancelled || res.ToolCallID != "c1" {
		t.Errorf("result = %+v", msgs[1].Parts)
	}
}

// flush waits until the journal has written what is queued.
func (j *journal) flush(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	// afterWrites, not do: do's fn may run inside the batch of the writes
	// before it, before they commit, and the test then reads the store.
	j.afterWrites(func(context.Context, store.Store) error { close(done); return nil })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the journal did not write")
	}
}

func storedTexts(t *testing.T, st store.Store) string {
	t.Helper()
	msgs, err := st.AllMessages(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+":"+m.Text())
	}
	return strings.Join(out, "|")
}

package actors

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
	for _, m := range req.Messages[1:] {
		if m.Role == llm.RoleUser || (m.Role == llm.RoleAssistant && m.Content != "") {
			texts = append(texts, m.Content)
		}
	}
	if got := strings.Join(texts, "|"); got != "first question|first answer|second question" {
		t.Errorf("resumed request carried %q", got)
	}
}

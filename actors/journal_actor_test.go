package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// hangingStore is a real store whose first message append hangs, like a
// commit stuck behind a slow disk, until released.
type hangingStore struct {
	store.Store
	entered chan struct{}
	release chan struct{}
	first   bool
}

func (h *hangingStore) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	if !h.first { // the journal writes one batch at a time
		h.first = true
		close(h.entered)
		<-h.release
	}
	return h.Store.AppendMessage(ctx, m)
}

// The journal's commits run off its mailbox: while one hangs, the journal
// still counts what waits behind it and, fenced from outside, answers the
// barrier queued behind it at once and drops the write queued with it;
// the hung commit, once it lands, is the last thing written.
func TestJournalAnswersWhileACommitHangs(t *testing.T) {
	st := openStore(t)
	if _, err := st.CreateSession(t.Context(), store.Session{ID: "s1", Project: "/p", Agent: store.AgentOrchestrator}); err != nil {
		t.Fatal(err)
	}
	hs := &hangingStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(hs.release)
		}
	}()
	j := newJournal(hs, zerolog.Nop())
	told := make(chan *TakenOverError, 2)
	j.onFenced = func(to *TakenOverError) { told <- to }
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "first"}, "", "", time.Now())
	select {
	case <-hs.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the first write never started")
	}
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "second"}, "", "", time.Now())
	barrier := j.barrier()
	waitFor(t, func() bool { return j.Stats().Queued == 3 }) // the hung write, the second, the barrier
	j.fence(fmt.Errorf("the ledger's write: %w", store.ErrFenced))
	select {
	case err := <-barrier:
		if !errors.Is(err, store.ErrFenced) || !errors.Is(err, ErrNotSaved) {
			t.Errorf("barrier = %v, want the takeover", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the barrier waited for the hung commit: the journal's mailbox is blocked")
	}
	close(hs.release)
	released = true
	select {
	case <-j.stopped:
	case <-time.After(20 * time.Second):
		t.Fatal("the journal did not stop after its last batch")
	}
	var to *TakenOverError
	if err := j.close(); !errors.As(err, &to) {
		t.Errorf("close = %v, want the TakenOverError", err)
	}
	if len(told) != 1 {
		t.Errorf("onFenced told %d times, want once", len(told))
	}
	msgs, err := st.Messages(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range store.LLMMessages(msgs) {
		texts = append(texts, m.Content)
	}
	if strings.Join(texts, ",") != "first" {
		t.Errorf("stored %q, want only the write that was committing when the session was fenced", texts)
	}
}

// Close stops the Orchestrator before the journal: what the Orchestrator
// writes while it stops (a detached run abandoned at exit) is stored, and
// the journal's actor is gone with the session.
func TestCloseStoresTheRunsAbandonedAtExit(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(bg("search", "slow look", "look slowly")),
			llmtest.Step{When: "Started search run", ToolCalls: []llmtest.ToolCall{llmtest.Call(AgentStopToolName, map[string]any{"id": "search-1", "detach": true})}},
			llmtest.Step{When: "detached", Text: "left it working"},
		).
		Add("search", llmtest.Step{Hold: "s", ToolCalls: searchReport("never").ToolCalls})
	st := openStore(t)
	h := newHarness(t, s, withStore(st))
	defer h.client.Release("s")
	h.sess.Submit("start something slow", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnDone {
		t.Fatalf("turn = %+v", r)
	}
	if run := runsByHandle(t, h)["search-1"]; run.Status != messages.RunRunning || !run.Detached {
		t.Fatalf("detached run = %+v", run)
	}
	jpid := h.sess.j.pid
	if err := h.sess.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	recs, err := st.AgentRuns(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var stored []messages.AgentRun
	for _, rec := range recs {
		var run messages.AgentRun
		if err := json.Unmarshal(rec.Data, &run); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, run)
	}
	if len(stored) != 1 || stored[0].Status != messages.RunAbandoned || !strings.Contains(stored[0].Summary, "abandoned at exit") {
		t.Fatalf("stored runs = %+v, want search-1 abandoned at exit", stored)
	}
	if _, ok := h.sess.system.ProcessRegistry.GetLocal(jpid.Id); ok {
		t.Errorf("the journal's actor %s outlived its session", jpid.Id)
	}
}

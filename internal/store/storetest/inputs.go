package storetest

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
)

func inputs(t *testing.T, s store.Store) store.Inputs {
	t.Helper()
	in, ok := s.(store.Inputs)
	if !ok {
		t.Skipf("%T does not implement store.Inputs", s)
	}
	return in
}

// testInputsIdempotent: an input ID accepted twice (one after the other,
// or by many deliveries at once) is stored once, every delivery after the
// first is told dup and gets the first one's stored state; the ledger is
// per session.
func testInputsIdempotent(t *testing.T, open Opener) {
	s := open(t)
	ix := inputs(t, s)
	ctx := t.Context()
	id := mustSession(t, s, store.Session{}).ID
	other := mustSession(t, s, store.Session{}).ID

	first, dup, err := ix.AcceptInput(ctx, store.Input{ID: "key-1", SessionID: id, Body: "fix the bug", Mode: "edit", CreatedAt: at(1)})
	if err != nil || dup {
		t.Fatalf("first AcceptInput: dup %v, err %v", dup, err)
	}
	want := store.Input{ID: "key-1", SessionID: id, State: store.InputAccepted, Body: "fix the bug", Mode: "edit", CreatedAt: at(1), UpdatedAt: at(1)}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("stored input (-want +got):\n%s", diff)
	}
	again, dup, err := ix.AcceptInput(ctx, store.Input{ID: "key-1", SessionID: id, Body: "something else", CreatedAt: at(5)})
	if err != nil || !dup {
		t.Fatalf("repeated AcceptInput: dup %v, err %v; want dup", dup, err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("a repeated input is answered with the first one's state (-first +got):\n%s", diff)
	}
	// The same key in another session is another input.
	if _, dup, err := ix.AcceptInput(ctx, store.Input{ID: "key-1", SessionID: other, Body: "x"}); err != nil || dup {
		t.Errorf("the same ID in another session: dup %v, err %v", dup, err)
	}

	// Concurrent deliveries of one new ID: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, dup, err := ix.AcceptInput(ctx, store.Input{ID: "key-race", SessionID: id, Body: "race"})
			if err != nil {
				t.Errorf("concurrent AcceptInput: %v", err)
				return
			}
			if !dup {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d concurrent deliveries of one ID were accepted as new, want 1", wins)
	}

	pending, err := ix.PendingInputs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pending {
		got = append(got, p.ID)
	}
	if diff := cmp.Diff([]string{"key-1", "key-race"}, got); diff != "" {
		t.Errorf("pending inputs in acceptance order (-want +got):\n%s", diff)
	}

	_, _, err = ix.AcceptInput(ctx, store.Input{SessionID: id, Body: "no id"})
	wantErr(t, "AcceptInput without an ID", err, store.ErrInvalid)
	_, _, err = ix.AcceptInput(ctx, store.Input{ID: "k", SessionID: "no-such-session"})
	wantErr(t, "AcceptInput for a missing session", err, store.ErrNotFound)
	_, err = ix.Input(ctx, id, "never-accepted")
	wantErr(t, "Input never accepted", err, store.ErrNotFound)
}

// testFinishInput: the final reply and the input's done mark are written
// together — replacing the reply persisted while it streamed, or appended
// — and a session with no input left accepted is no longer pending.
func testFinishInput(t *testing.T, open Opener) {
	s := open(t)
	ix := inputs(t, s)
	ctx := t.Context()
	id := mustSession(t, s, store.Session{}).ID
	for _, k := range []string{"in-1", "in-2"} {
		if _, _, err := ix.AcceptInput(ctx, store.Input{ID: k, SessionID: id, Body: k}); err != nil {
			t.Fatal(err)
		}
	}
	sessions, err := ix.PendingSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{id}, sessions); diff != "" {
		t.Errorf("pending sessions (-want +got):\n%s", diff)
	}

	user := text(id, llm.RoleUser, "question 1")
	user.InputID = "in-1"
	stored := mustAppend(t, s, user)
	if stored.InputID != "in-1" {
		t.Errorf("appended user message has InputID %q, want in-1", stored.InputID)
	}
	partial := mustAppend(t, s, text(id, llm.RoleAssistant, "half an ans"))
	final := store.Message{ID: partial.ID, SessionID: id, Role: llm.RoleAssistant, Model: "m",
		Parts: []store.Part{store.TextPart{Text: "half an answer, whole"}, store.FinishPart{Reason: llm.FinishStop, Time: at(2)}}}
	if _, err := ix.FinishInput(ctx, "in-1", final); err != nil {
		t.Fatal(err)
	}
	all, err := s.AllMessages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[1].ID != partial.ID || all[1].Text() != "half an answer, whole" || all[0].InputID != "in-1" {
		t.Errorf("after FinishInput over the streamed reply: %+v", all)
	}
	in, err := ix.Input(ctx, id, "in-1")
	if err != nil || in.State != store.InputDone {
		t.Errorf("input in-1 after FinishInput: %+v, %v; want done", in, err)
	}

	// No reply persisted yet: FinishInput appends it.
	appended, err := ix.FinishInput(ctx, "in-2", text(id, llm.RoleAssistant, "answer 2"))
	if err != nil {
		t.Fatal(err)
	}
	if appended.Seq != 3 || appended.ID == "" {
		t.Errorf("appended final reply: seq %d id %q, want seq 3 and an ID", appended.Seq, appended.ID)
	}
	if pending, err := ix.PendingInputs(ctx, id); err != nil || len(pending) != 0 {
		t.Errorf("pending after both finished: %+v, %v", pending, err)
	}
	if sessions, err := ix.PendingSessions(ctx); err != nil || len(sessions) != 0 {
		t.Errorf("pending sessions after both finished: %v, %v", sessions, err)
	}
	// Marking done again, or an input never accepted, is no error.
	if err := ix.MarkInputDone(ctx, id, "in-2"); err != nil {
		t.Errorf("MarkInputDone of a done input: %v", err)
	}
	if _, err := ix.FinishInput(ctx, "not-in-ledger", text(id, llm.RoleAssistant, "answer 3")); err != nil {
		t.Errorf("FinishInput of an input not in the ledger: %v", err)
	}
	// A failed final write marks nothing done.
	if _, _, err := ix.AcceptInput(ctx, store.Input{ID: "in-3", SessionID: id}); err != nil {
		t.Fatal(err)
	}
	bad := store.Message{SessionID: id, Role: "narrator", Parts: []store.Part{store.TextPart{Text: "x"}}}
	_, err = ix.FinishInput(ctx, "in-3", bad)
	wantErr(t, "FinishInput with an invalid reply", err, store.ErrInvalid)
	if in, err := ix.Input(ctx, id, "in-3"); err != nil || in.State != store.InputAccepted {
		t.Errorf("input in-3 after a failed FinishInput: %+v, %v; want still accepted", in, err)
	}
}

// testInterrupted: a reply marked interrupted stays in AllMessages and
// the exports, flagged, and is left out of the model's view (Messages),
// tool calls it announced included (no repair is made for them).
func testInterrupted(t *testing.T, open Opener) {
	s := open(t)
	ix := inputs(t, s)
	ctx := t.Context()
	id := mustSession(t, s, store.Session{}).ID
	mustAppend(t, s, text(id, llm.RoleUser, "question"))
	partial := mustAppend(t, s, store.Message{SessionID: id, Role: llm.RoleAssistant, Parts: []store.Part{
		store.TextPart{Text: "I will rea"}, store.ToolCallPart{ID: "call_cut", Name: "ReadFile", Input: "{}"}}})
	if err := ix.MarkInterrupted(ctx, partial.ID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "MarkInterrupted of a missing message", ix.MarkInterrupted(ctx, "no-such-message"), store.ErrNotFound)
	view, err := s.Messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(view) != 1 || view[0].Text() != "question" {
		t.Errorf("the model's view holds %d messages %+v, want the question only", len(view), view)
	}
	all, err := s.AllMessages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || !all[1].Interrupted || all[0].Interrupted {
		t.Errorf("AllMessages after MarkInterrupted: %+v", all)
	}
	// Continuing the turn appends after it.
	next := mustAppend(t, s, text(id, llm.RoleAssistant, "the whole answer"))
	if next.Seq != 3 {
		t.Errorf("reply after the interrupted one has seq %d, want 3", next.Seq)
	}
	var jsonl, md bytes.Buffer
	if err := store.ExportJSONL(ctx, s, &jsonl, id); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(jsonl.Bytes(), []byte(`"interrupted":true`)) {
		t.Errorf("the JSONL export does not flag the interrupted reply:\n%s", jsonl.Bytes())
	}
	if err := store.ExportMarkdown(ctx, s, &md, id); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md.Bytes(), []byte("(interrupted")) || !bytes.Contains(md.Bytes(), []byte("I will rea")) {
		t.Errorf("the Markdown export does not show the interrupted reply as such:\n%s", md.Bytes())
	}
	// The flag and the input ID survive export → import.
	dst := open(t)
	if _, err := store.ImportJSONL(ctx, dst, bytes.NewReader(jsonl.Bytes())); err != nil {
		t.Fatal(err)
	}
	back, err := dst.AllMessages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || !back[1].Interrupted {
		t.Errorf("imported messages lost the interrupted flag: %+v", back)
	}
}

// testFencedInputs: the ledger's writes through a superseded claim fail
// with ErrFenced and change nothing.
func testFencedInputs(t *testing.T, open Opener) {
	s := open(t)
	c, ok := s.(store.Claimer)
	if !ok {
		t.Skipf("%T does not implement store.Claimer", s)
	}
	ix := inputs(t, s)
	ctx := t.Context()
	id := mustSession(t, s, store.Session{}).ID
	if _, _, err := ix.AcceptInput(ctx, store.Input{ID: "in-1", SessionID: id}); err != nil {
		t.Fatal(err)
	}
	m := mustAppend(t, s, text(id, llm.RoleAssistant, "partial"))
	a, err := c.Claim(ctx, id, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(ctx, id, "node-b"); err != nil {
		t.Fatal(err)
	}
	for name, fn := range map[string]func(context.Context) error{
		"AcceptInput": func(ctx context.Context) error {
			_, _, err := a.AcceptInput(ctx, store.Input{ID: "in-2", SessionID: id})
			return err
		},
		"FinishInput": func(ctx context.Context) error {
			_, err := a.FinishInput(ctx, "in-1", store.Message{ID: m.ID, SessionID: id, Role: llm.RoleAssistant, Parts: []store.Part{store.TextPart{Text: "zombie"}}})
			return err
		},
		"MarkInputDone":   func(ctx context.Context) error { return a.MarkInputDone(ctx, id, "in-1") },
		"MarkInterrupted": func(ctx context.Context) error { return a.MarkInterrupted(ctx, m.ID) },
	} {
		wantErr(t, name+" through the superseded claim", fn(ctx), store.ErrFenced)
	}
	pending, err := ix.PendingInputs(ctx, id)
	if err != nil || len(pending) != 1 || pending[0].ID != "in-1" {
		t.Errorf("pending after the zombie's writes: %+v, %v; want in-1 only", pending, err)
	}
	all, err := s.AllMessages(ctx, id)
	if err != nil || len(all) != 1 || all[0].Text() != "partial" || all[0].Interrupted {
		t.Errorf("messages after the zombie's writes: %+v, %v", all, err)
	}
}

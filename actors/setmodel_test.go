package actors

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
)

// Session.SetModel stores the session's model through its claim, on both
// backends: the row says the model once SetModel returns; after another
// process claims the session, SetModel fails with the TakenOverError
// naming the new epoch and the stored model stays the one the new owner
// sees.
func TestSessionSetModelThroughClaim(t *testing.T) {
	for _, be := range fenceBackends() {
		t.Run(be.name, func(t *testing.T) {
			st, other := be.open(t)
			var a *store.Fenced
			h := newHarness(t, llmtest.NewScript(), withClaim(st, &a))
			ctx := t.Context()
			if err := h.sess.SetModel(ctx, "picked-model"); err != nil {
				t.Fatalf("SetModel: %v", err)
			}
			// Read through the other store, as the next process would.
			rec, err := other.Session(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if rec.Model != "picked-model" {
				t.Fatalf("stored model = %q, want picked-model", rec.Model)
			}

			b := claim(t, other, "s1", "node-b")
			err = h.sess.SetModel(ctx, "zombie-model")
			var to *TakenOverError
			if !errors.As(err, &to) || !errors.Is(err, store.ErrFenced) || to.Epoch != b.Epoch() {
				t.Fatalf("SetModel after a takeover = %v, want a TakenOverError at epoch %d", err, b.Epoch())
			}
			if rec, err = other.Session(ctx, "s1"); err != nil {
				t.Fatal(err)
			} else if rec.Model != "picked-model" {
				t.Errorf("stored model = %q after the zombie's SetModel, want picked-model", rec.Model)
			}
		})
	}
}

// The journal's setModel answers with its own write's outcome: a model
// write the store rejects (the session is gone) comes back as that error,
// and the loss is still reported to the next barrier, the one a turn's
// end waits on, which a model write must not take from it.
func TestJournalSetModelAnswersItsOwnWrite(t *testing.T) {
	st := openFile(t, filepath.Join(t.TempDir(), "odin.db"))
	if _, err := st.CreateSession(t.Context(), store.Session{ID: "s1", Project: "/p", Agent: store.AgentOrchestrator}); err != nil {
		t.Fatal(err)
	}
	j := newJournal(st, zerolog.Nop())
	defer j.close()
	wait := func(ch <-chan error) error {
		t.Helper()
		select {
		case err := <-ch:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("setModel never answered")
			return nil
		}
	}
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "before"}, "", "", time.Now())
	if err := wait(j.setModel("s1", "m1")); err != nil {
		t.Fatalf("setModel of a stored session = %v", err)
	}
	if rec, err := st.Session(t.Context(), "s1"); err != nil || rec.Model != "m1" {
		t.Fatalf("stored model = %q (%v), want m1", rec.Model, err)
	}
	if err := wait(j.setModel("gone", "m2")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("setModel of a missing session = %v, want ErrNotFound", err)
	}
	if err := <-j.barrier(); !errors.Is(err, ErrNotSaved) {
		t.Errorf("the barrier after a given-up model write = %v, want ErrNotSaved: the loss is the turn's to report", err)
	}
	if err := <-j.barrier(); err != nil {
		t.Errorf("a later barrier = %v, want nil", err)
	}
}

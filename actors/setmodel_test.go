package actors

import (
	"errors"
	"testing"

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

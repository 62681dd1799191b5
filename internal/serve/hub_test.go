package serve

import (
	"testing"

	"github.com/odin-code/odin/messages"
)

func TestHubResumesAfterLastEventIDAndReportsGaps(t *testing.T) {
	h := newHub(3)
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		h.add("", messages.Envelope{Event: messages.TextDelta{Text: s}})
	}
	// Held: 3, 4, 5.
	recs, gap, _, closed := h.since(3)
	if gap || closed || len(recs) != 2 || recs[0].seq != 4 || recs[1].seq != 5 {
		t.Fatalf("since(3) = %v gap=%v closed=%v", recs, gap, closed)
	}
	if _, gap, _, _ := h.since(2); gap {
		t.Error("since(2): events 3.. are all held, no gap")
	}
	recs, gap, _, _ = h.since(1)
	if !gap || len(recs) != 3 {
		t.Errorf("since(1) = %d records gap=%v, want 3 and a gap (event 2 was dropped)", len(recs), gap)
	}
	h.trim()
	if _, gap, _, _ := h.since(5); gap {
		t.Error("a client up to date sees no gap after passivation")
	}
	h.add("", messages.Envelope{Event: messages.TextDelta{Text: "f"}})
	if recs, _, _, _ := h.since(5); len(recs) != 1 || recs[0].seq != 6 {
		t.Errorf("sequence numbers continue after passivation: %v", recs)
	}
	_, _, changed, _ := h.since(6)
	h.close("shutdown", []byte(`{}`))
	select {
	case <-changed:
	default:
		t.Fatal("close did not wake waiting streams")
	}
	recs, _, _, closed = h.since(6)
	if !closed || len(recs) != 1 || recs[0].typ != "shutdown" {
		t.Errorf("after close: %v closed=%v, want the final shutdown event", recs, closed)
	}
}

// TestHubSinceAcrossTrims: past its size the buffer keeps the newest
// events, each client gets exactly the events after its last one, and an
// id from the future gets none.
func TestHubSinceAcrossTrims(t *testing.T) {
	h := newHub(8)
	for i := range 100 {
		h.add("", messages.Envelope{Event: messages.TextDelta{Text: string(rune('a' + i%26))}})
		last := h.last()
		for _, after := range []uint64{last - 1, last - 5, last - 8} {
			if after > last {
				continue
			}
			recs, gap, _, _ := h.since(after)
			if gap || uint64(len(recs)) != last-after {
				t.Fatalf("after %d events, since(%d): %d records gap=%v", last, after, len(recs), gap)
			}
			for k, r := range recs {
				if r.seq != after+1+uint64(k) {
					t.Fatalf("since(%d)[%d].seq = %d", after, k, r.seq)
				}
			}
		}
	}
	if recs, _, _, _ := h.since(1000); len(recs) != 0 {
		t.Errorf("since(1000) = %d records, want none", len(recs))
	}
	if recs, gap, _, _ := h.since(0); !gap || len(recs) < 8 {
		t.Errorf("since(0) = %d records gap=%v, want a gap and at least the 8 newest", len(recs), gap)
	}
}

// TestHubGapIsToldOnce: a client behind a passivation (the buffer
// dropped) hears of the gap once; continuing from where the gap ends, it
// gets the events that follow without being told again.
func TestHubGapIsToldOnce(t *testing.T) {
	h := newHub(8)
	for _, s := range []string{"a", "b", "c"} {
		h.add("", messages.Envelope{Event: messages.TextDelta{Text: s}})
	}
	h.trim()
	recs, from, _, _ := h.after(1)
	if len(recs) != 0 || from != 3 {
		t.Fatalf("after(1) on an empty buffer = %d records from %d, want none from 3", len(recs), from)
	}
	h.add("", messages.Envelope{Event: messages.TextDelta{Text: "d"}})
	recs, next, _, _ := h.after(from)
	if next != from || len(recs) != 1 || recs[0].seq != 4 {
		t.Errorf("after(%d) = %v from %d, want event 4 and no new gap", from, recs, next)
	}
	if _, again, _, _ := h.after(1); again != 3 {
		t.Errorf("after(1) = from %d, want 3: the gap is still there for a client that never heard of it", again)
	}
}

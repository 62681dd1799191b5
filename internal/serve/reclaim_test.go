package serve

import (
	"runtime"
	"testing"
)

// TestReclaimReturnsMemoryAfterABurst: with a turn in flight, or too
// little work since the last time, nothing happens; once the server is
// idle after enough turns, the heap the burst freed goes back to the OS.
func TestReclaimReturnsMemoryAfterABurst(t *testing.T) {
	e := &entry{id: "s", hub: newHub(8)}
	e.inFlight.Store(1)
	m := &manager{sessions: map[string]*entry{"s": e}}
	for range reclaimAfter {
		m.finished.add("done")
	}
	if m.reclaim() {
		t.Fatal("reclaimed with a turn in flight")
	}
	e.inFlight.Store(0)

	// The burst's garbage: 64 MB live now, dropped before reclaiming.
	burst = make([][]byte, 64)
	for i := range burst {
		burst[i] = make([]byte, 1<<20)
		burst[i][0] = 1
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	burst = nil
	if !m.reclaim() {
		t.Fatal("an idle server after a burst did not reclaim")
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.HeapReleased < before.HeapReleased+32<<20 {
		t.Errorf("heap released to the OS: %d MB before, %d MB after; want the burst's 64 MB back",
			before.HeapReleased>>20, after.HeapReleased>>20)
	}
	if m.reclaim() {
		t.Error("reclaimed again with no work since")
	}
	m.passivated.Add(reclaimAfter)
	if !m.reclaim() {
		t.Error("passivations are work too: not reclaimed after them")
	}
}

// burst is package-level so that the compiler cannot drop its
// allocations.
var burst [][]byte

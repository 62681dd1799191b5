package serve

import (
	"bytes"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/odin-code/odin/internal/metrics"
)

// JournalQueuer is implemented by sessions that can tell how many of
// their store writes are queued; /metrics sums it over the running
// sessions.
type JournalQueuer interface {
	JournalQueued() int
}

// metrics serves GET /metrics in the Prometheus text format: the server's
// sessions and turns, the journals' queues, then the process-wide store
// and model instruments, goroutines, file descriptors and memory.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	s.m.mu.Lock()
	all := make([]*entry, 0, len(s.m.sessions))
	for _, e := range s.m.sessions {
		all = append(all, e)
	}
	s.m.mu.Unlock()
	var active, inFlight, queued int64
	for _, e := range all {
		inFlight += e.inFlight.Load()
		// A session being passivated or restored holds its lock for as
		// long as that takes: a scrape does not wait for it and counts
		// the session active.
		if !e.mu.TryLock() {
			active++
			continue
		}
		sess := e.sess
		e.mu.Unlock()
		if sess == nil {
			continue
		}
		active++
		if q, ok := sess.(JournalQueuer); ok {
			queued += int64(q.JournalQueued())
		}
	}
	metrics.Header(&b, "odin_serve_sessions", "gauge", "Sessions the server knows, by state: active (in memory) or passivated (in the store only).")
	metrics.Sample(&b, "odin_serve_sessions", float64(active), "state", "active")
	metrics.Sample(&b, "odin_serve_sessions", float64(int64(len(all))-active), "state", "passivated")
	metrics.Header(&b, "odin_serve_passivations_total", "counter", "Sessions passivated since the server started.")
	metrics.Sample(&b, "odin_serve_passivations_total", float64(s.m.passivated.Load()))
	metrics.Header(&b, "odin_serve_turns_in_flight", "gauge", "Inputs submitted whose turn has not finished (running or queued).")
	metrics.Sample(&b, "odin_serve_turns_in_flight", float64(inFlight))
	byStatus, _ := s.m.finished.snapshot()
	metrics.Header(&b, "odin_serve_turns_finished_total", "counter", "Turns finished, by status.")
	statuses := make([]string, 0, len(byStatus))
	for st := range byStatus {
		statuses = append(statuses, st)
	}
	slices.Sort(statuses)
	for _, st := range statuses {
		metrics.Sample(&b, "odin_serve_turns_finished_total", float64(byStatus[st]), "status", st)
	}
	metrics.Header(&b, "odin_serve_event_streams", "gauge", "Event streams (SSE clients) open.")
	metrics.Sample(&b, "odin_serve_event_streams", float64(s.streams.Load()))
	metrics.Header(&b, "odin_journal_queued_writes", "gauge", "Store writes queued in the active sessions' journals, not yet being written.")
	metrics.Sample(&b, "odin_journal_queued_writes", float64(queued))
	metrics.WriteAll(&b)
	metrics.Header(&b, "go_goroutines", "gauge", "Goroutines that currently exist.")
	metrics.Sample(&b, "go_goroutines", float64(runtime.NumGoroutine()))
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		metrics.Header(&b, "process_open_fds", "gauge", "Open file descriptors.")
		metrics.Sample(&b, "process_open_fds", float64(len(fds)))
	}
	if rss, ok := residentBytes(); ok {
		metrics.Header(&b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")
		metrics.Sample(&b, "process_resident_memory_bytes", float64(rss))
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// residentBytes reads the process's resident set from /proc/self/statm
// (Linux; ok is false elsewhere).
func residentBytes() (int64, bool) {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(raw))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

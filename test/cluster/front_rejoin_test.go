package cluster

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store/pgtest"
)

// TestFrontRejoinAfterDrop: a live serve front whose heartbeats stop for
// longer than the TTL (SIGSTOP for 4 TTLs, then SIGCONT) is dropped by
// the cluster. When it resumes it rejoins under a new member ID without
// restarting its HTTP server: an event stream opened before the stop
// goes on and carries the next turn's end; an existing session and a new
// one answer through the new member; each answer is stored once.
// PostgreSQL, a state directory per process, as on separate hosts.
func TestFrontRejoinAfterDrop(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts two odin processes and PostgreSQL")
	}
	script := llmtest.NewScript()
	for range 20 {
		script.Add("orchestrator", llmtest.Step{When: "first", Text: "first answer"})
		script.Add("orchestrator", llmtest.Step{When: "after", Text: "answered after the front rejoined"})
		script.Add("orchestrator", llmtest.Step{When: "fresh", Text: "a new session after the rejoin"})
	}
	pgURL := pgtest.New(t).Database(t)
	f := newFleet(t, script, pgURL)
	f.ownState = true
	f.worker("worker-1")
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	create := func() string { t.Helper(); return fr.mustCreate(t, f.project) }
	turn := func(id, body, want string) { t.Helper(); fr.mustTurn(ctx, t, id, body, want) }
	old := create()
	turn(old, "first", "first answer")
	// A stream opened before the stop, read after the rejoin.
	kept, err := fr.events(ctx, old)
	if err != nil {
		t.Fatal(err)
	}

	if err := fr.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = fr.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	time.Sleep(4 * time.Second) // 4 TTLs: the worker drops the front
	if err := fr.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	contd := time.Now()

	rejoined := waitRejoined(ctx, t, fr.proc)
	sinceCont := time.Since(contd)

	turn(old, "after the rejoin", "answered after the front rejoined")
	// The stream opened before the stop survived the rejoin: it carries
	// the turn's end.
	got := false
	for !got {
		select {
		case ev, ok := <-kept:
			if !ok {
				t.Fatalf("the event stream opened before the stop ended instead of going on")
			}
			if ev.typ != "turn_finished" {
				continue
			}
			res, _ := ev.data["result"].(map[string]any)
			in, _ := res["input"].(map[string]any)
			got = in["body"] == "after the rejoin" && res["answer"] == "answered after the front rejoined"
		case <-ctx.Done():
			t.Fatal("the event stream opened before the stop never carried the turn after the rejoin")
		}
	}
	fresh := create()
	turn(fresh, "fresh", "a new session after the rejoin")

	for id, answers := range map[string][]string{old: {"first answer", "answered after the front rejoined"}, fresh: {"a new session after the rejoin"}} {
		lines := fr.messageLines(t, id)
		for _, a := range answers {
			if n := strings.Count(lines, a); n != 1 {
				t.Errorf("session %s's history holds %q %d times, want once:\n%s", id, a, n, lines)
			}
		}
	}
	t.Logf("the front %s rejoined as %s (seen %v after the SIGCONT)", fr.member, rejoined, sinceCont.Round(10*time.Millisecond))
}

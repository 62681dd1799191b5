package cluster

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store/pgtest"
)

var rejoinLine = regexp.MustCompile(`member (\S+) of cluster \S+ at \S+ \(rejoined; was (\S+)\)`)

// TestRejoinAfterDrop: a live worker whose heartbeats stop for longer
// than the TTL (SIGSTOP for 4 TTLs, then SIGCONT) is dropped by the
// cluster, which protoactor never lets back under the same member ID.
// Meanwhile its session fails over to the other worker (a claim at epoch
// 2). When it resumes it finds it was dropped and rejoins under a new
// member ID; new sessions are placed on it again and answer; the
// session that failed over is never again the old member's (epoch 2 or
// a later claim: the new member may take it over) and goes on
// answering, its history holding each turn once. PostgreSQL,
// a state directory per process, as on separate hosts (see TestZombie).
func TestRejoinAfterDrop(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes and PostgreSQL")
	}
	script := llmtest.NewScript()
	for range 40 {
		script.Add("orchestrator", llmtest.Step{When: "first", Text: "first answer"})
		script.Add("orchestrator", llmtest.Step{When: "during", Text: "answered by the survivor"})
		script.Add("orchestrator", llmtest.Step{When: "after", Text: "answered after the rejoin"})
		script.Add("orchestrator", llmtest.Step{When: "placed", Text: "answered by the rejoined worker"})
	}
	pgURL := pgtest.New(t).Database(t)
	f := newFleet(t, script, pgURL)
	f.ownState = true
	w1, w2 := f.worker("worker-1"), f.worker("worker-2")
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	create := func() string { t.Helper(); return fr.mustCreate(t, f.project) }
	turn := func(id, body, want string) { t.Helper(); fr.mustTurn(ctx, t, id, body, want) }
	// A session on worker-1, the one to be stopped.
	var moved string
	for range 20 {
		id := create()
		turn(id, "first", "first answer")
		if f.owners(ctx, []string{id})[id].Owner == w1.member {
			moved = id
			break
		}
	}
	if moved == "" {
		t.Fatalf("20 sessions, none placed on %s", w1.member)
	}

	if err := w1.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = w1.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	stopped := time.Now()
	// The front drops worker-1 after the TTL: the session fails over.
	turn(moved, "during the stop", "answered by the survivor")
	if c := f.owners(ctx, []string{moved})[moved]; c.Owner != w2.member || c.Epoch != 2 {
		t.Fatalf("during the stop: owner %s epoch %d, want %s at epoch 2", c.Owner, c.Epoch, w2.member)
	}
	// Silent for 4 TTLs in all, whatever the failover took.
	time.Sleep(time.Until(stopped.Add(4 * time.Second)))
	if err := w1.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true

	rejoined := waitRejoined(ctx, t, w1)
	// New placements reach the rejoined worker and it answers them.
	placed := 0
	for i := 0; i < 30 && placed == 0; i++ {
		id := create()
		turn(id, fmt.Sprint("placed ", i), "answered by the rejoined worker")
		if f.owners(ctx, []string{id})[id].Owner == rejoined {
			placed++
		}
	}
	if placed == 0 {
		t.Errorf("30 new sessions after the rejoin, none placed on the rejoined worker %s", rejoined)
	}
	// The session that failed over stays fenced to the survivor's claim:
	// it answers from there, and each of its turns is stored once.
	turn(moved, "after the rejoin", "answered after the rejoin")
	c := f.owners(ctx, []string{moved})[moved]
	if c.Owner == w1.member {
		t.Errorf("the moved session is owned by worker-1's old member ID %s again", w1.member)
	}
	if c.Epoch < 2 {
		t.Errorf("the moved session is at epoch %d, want 2 or later (the survivor's claim, or one after it)", c.Epoch)
	}
	lines := fr.messageLines(t, moved)
	for _, answer := range []string{"first answer", "answered by the survivor", "answered after the rejoin"} {
		if n := strings.Count(lines, answer); n != 1 {
			t.Errorf("the moved session's history holds %q %d times, want once:\n%s", answer, n, lines)
		}
	}
	t.Logf("worker-1 %s rejoined as %s; %d new session(s) placed on it", w1.member, rejoined, placed)
}

// waitRejoined waits for p's line saying it rejoined after being dropped,
// checks it names p's old member ID and a new one, and returns the new ID.
func waitRejoined(ctx context.Context, t *testing.T, p *proc) string {
	t.Helper()
	for {
		if m := rejoinLine.FindStringSubmatch(p.out.String()); m != nil {
			if m[2] != p.member {
				t.Fatalf("%s rejoined as %s, was %s; want was %s", p.name, m[1], m[2], p.member)
			}
			if m[1] == p.member {
				t.Fatalf("%s rejoined under its old member ID %s", p.name, m[1])
			}
			return m[1]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never rejoined after the SIGCONT:\n%s", p.name, p.out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

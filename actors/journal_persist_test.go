package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
)

// fullStore fails every AppendMessage while full is set, as SQLite does on
// a full disk.
type fullStore struct {
	store.Store
	full atomic.Bool
}

var errDiskFull = errors.New("database or disk is full (13)")

func (f *fullStore) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	if f.full.Load() {
		return store.Message{}, errDiskFull
	}
	return f.Store.AppendMessage(ctx, m)
}

type reports struct {
	mu  sync.Mutex
	got []error
}

func (r *reports) add(err error) { r.mu.Lock(); r.got = append(r.got, err); r.mu.Unlock() }
func (r *reports) list() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.got...)
}

// batchingFullStore is fullStore that also batches, as SQLite does: the
// journal then writes what is queued in one transaction.
type batchingFullStore struct{ *fullStore }

func (b batchingFullStore) Batch(ctx context.Context, fn func(context.Context) error) error {
	return b.Store.(batcher).Batch(ctx, fn)
}

func newFullJournal(t *testing.T, batching bool) (*journal, *fullStore, *reports) {
	st := openStore(t)
	if _, err := st.CreateSession(t.Context(), store.Session{ID: "s1", Project: "/p", Agent: "orchestrator"}); err != nil {
		t.Fatal(err)
	}
	fs := &fullStore{Store: st}
	rep := &reports{}
	var js store.Store = fs
	if batching {
		js = batchingFullStore{fs}
	}
	j := newJournal(js, zerolog.Nop())
	j.report = rep.add
	return j, fs, rep
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never met")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A full disk loses nothing while the session runs: the failed write and
// those after it wait, in order, and land once space returns; the failure
// and the recovery are both reported.
func TestJournalKeepsWritesWhileDiskFull(t *testing.T) {
	for _, batching := range []bool{false, true} {
		t.Run(fmt.Sprintf("batching=%v", batching), func(t *testing.T) { testJournalKeepsWritesWhileDiskFull(t, batching) })
	}
}

func testJournalKeepsWritesWhileDiskFull(t *testing.T, batching bool) {
	j, fs, rep := newFullJournal(t, batching)
	now := time.Now()
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "before"}, "", "", now)
	waitFor(t, func() bool { m, _ := fs.Messages(t.Context(), "s1"); return len(m) == 1 })

	fs.full.Store(true)
	call := llm.ToolCall{ID: "c1", Name: "LS", Arguments: `{}`}
	j.appendMessage("s1", llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}}, "m", llm.FinishToolCalls, now)
	j.appendResult("s1", toolResult{msg: llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Name: "LS", Content: "a.go"}}, now)
	waitFor(t, func() bool { return len(rep.list()) == 1 })
	if got := rep.list()[0]; !errors.Is(got, errDiskFull) {
		t.Fatalf("reported %v, want the disk-full error", got)
	}
	if m, _ := fs.Messages(t.Context(), "s1"); len(m) != 1 {
		t.Fatalf("%d messages stored while full, want 1", len(m))
	}

	fs.full.Store(false)
	j.appendMessage("s1", llm.Message{Role: llm.RoleAssistant, Content: "after"}, "m", llm.FinishStop, now)
	if err := j.close(); err != nil {
		t.Fatalf("close after recovery: %v", err)
	}
	msgs, err := fs.Messages(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range msgs {
		switch {
		case len(m.ToolCalls()) > 0:
			order = append(order, "call")
		case len(m.ToolResults()) > 0:
			order = append(order, "result")
		default:
			order = append(order, m.Text())
		}
	}
	want := []string{"before", "call", "result", "after"}
	if len(order) != len(want) {
		t.Fatalf("stored %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("stored %v, want %v", order, want)
		}
	}
	if got := rep.list(); len(got) != 2 || got[1] != nil {
		t.Errorf("reports = %v, want the failure then the recovery (nil)", got)
	}
}

// When the disk is still full at close, close says so with ErrNotSaved.
func TestJournalCloseReportsLostWrites(t *testing.T) {
	j, fs, _ := newFullJournal(t, true)
	fs.full.Store(true)
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "lost"}, "", "", time.Now())
	err := j.close()
	if !errors.Is(err, ErrNotSaved) || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("close = %v, want ErrNotSaved naming the cause", err)
	}
}

package actors

import (
	"bytes"
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
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// outerKey marks a context inside one of the test stores' own batches, so
// that they tell the journal's transaction from its savepoints.
type outerKey struct{}

func inOuter(ctx context.Context) bool { return ctx.Value(outerKey{}) != nil }

// flakyStore is a real SQLite store whose batches fail the first n times
// as they do under load: the transaction never begins (a 10 s wait for the
// one writer connection ran out), or it ran and its commit failed (rolled
// back). Every failure is a context deadline, the error of the journal's
// attempt deadline.
type flakyStore struct {
	store.Store
	failAtCommit bool
	left         atomic.Int32
	attempts     atomic.Int32
}

var errRolledBack = errors.New("test: rolled back")

func (f *flakyStore) Batch(ctx context.Context, fn func(context.Context) error) error {
	b := f.Store.(batcher)
	if inOuter(ctx) {
		return b.Batch(ctx, fn)
	}
	f.attempts.Add(1)
	if f.left.Add(-1) < 0 {
		return b.Batch(context.WithValue(ctx, outerKey{}, true), fn)
	}
	if !f.failAtCommit {
		return fmt.Errorf("store: batch: %w", context.DeadlineExceeded)
	}
	err := b.Batch(context.WithValue(ctx, outerKey{}, true), func(ctx context.Context) error {
		if err := fn(ctx); err != nil {
			return err
		}
		return errRolledBack
	})
	if !errors.Is(err, errRolledBack) {
		return err
	}
	return fmt.Errorf("store: batch: commit: %w", context.DeadlineExceeded)
}

// fastRetries is a policy for tests: quick backoff, short patience.
var fastRetries = journalPolicy{first: time.Millisecond, most: 5 * time.Millisecond, attempt: 10 * time.Second,
	lasting: 100 * time.Millisecond, transient: 5 * time.Second}

func newSession(t *testing.T, st store.Store, id string) {
	t.Helper()
	if _, err := st.CreateSession(t.Context(), store.Session{ID: id, Project: "/p", Agent: "orchestrator"}); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects a journal's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Batches that time out or fail to commit are retried, with backoff, until
// they are written: nothing is lost, nothing is stored twice, the order
// holds, and a barrier taken after the writes answers nil only once they
// are readable. The old journal dropped a batch whose transaction never
// began, then logged that the history was complete.
func TestJournalRetriesUntilWritten(t *testing.T) {
	for _, atCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail_at_commit=%v", atCommit), func(t *testing.T) {
			st := openStore(t)
			newSession(t, st, "s1")
			const failures, writes = 4, 30
			fs := &flakyStore{Store: st, failAtCommit: atCommit}
			fs.left.Store(failures)
			var logs logBuffer
			j := newJournal(fs, zerolog.New(&logs))
			j.policy = fastRetries
			rep := &reports{}
			j.report = rep.add
			now := time.Now()
			for i := range writes {
				j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("m%02d", i)}, "", "", now)
			}
			select {
			case err := <-j.barrier():
				if err != nil {
					t.Fatalf("barrier = %v, want nil once the store recovered", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the barrier never answered")
			}
			msgs, err := st.Messages(t.Context(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.Text())
			}
			var want []string
			for i := range writes {
				want = append(want, fmt.Sprintf("m%02d", i))
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("stored when the barrier passed:\n got %v\nwant %v", got, want)
			}
			stats := j.Stats()
			if stats.Retries < failures || fs.attempts.Load() < failures+1 || stats.Lost != 0 || stats.Failing {
				t.Errorf("stats %+v after %d attempts, want %d retries and nothing lost", stats, fs.attempts.Load(), failures)
			}
			if err := j.close(); err != nil {
				t.Fatalf("close = %v", err)
			}
			if r := rep.list(); len(r) != 2 || r[0] == nil || r[1] != nil {
				t.Errorf("reports = %v, want the failure then the recovery", r)
			}
			if !strings.Contains(logs.String(), "every write queued so far is stored") {
				t.Errorf("the recovery was not logged:\n%s", logs.String())
			}
		})
	}
}

// A store that never accepts a write breaks the journal once the failure
// outlasts its patience: a waiting barrier, and any later one, answers
// ErrNotSaved naming the cause; nothing claims the history is complete;
// close says what was lost.
func TestJournalPermanentFailureIsNotHidden(t *testing.T) {
	j, fs, rep := newFullJournal(t, true)
	var logs logBuffer
	j.log = zerolog.New(&logs)
	j.policy = fastRetries
	fs.full.Store(true)
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "never stored"}, "", "", time.Now())
	barrier := j.barrier()
	select {
	case err := <-barrier:
		if !errors.Is(err, ErrNotSaved) || !strings.Contains(err.Error(), "disk is full") {
			t.Fatalf("barrier = %v, want ErrNotSaved naming the cause", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the barrier never answered while the store failed")
	}
	if err := j.brokenErr(); !errors.Is(err, ErrNotSaved) {
		t.Errorf("brokenErr = %v", err)
	}
	if err := <-j.barrier(); !errors.Is(err, ErrNotSaved) {
		t.Errorf("a barrier taken while broken = %v", err)
	}
	err := j.close()
	if !errors.Is(err, ErrNotSaved) || !strings.Contains(err.Error(), "1 writes lost") {
		t.Fatalf("close = %v, want ErrNotSaved with the lost write", err)
	}
	for _, r := range rep.list() {
		if r == nil {
			t.Errorf("a recovery was reported though nothing was written: %v", rep.list())
		}
	}
	for _, claim := range []string{"is stored", "complete", "succeed again"} {
		if strings.Contains(logs.String(), claim) {
			t.Errorf("the log claims %q:\n%s", claim, logs.String())
		}
	}
	if m, _ := fs.Messages(t.Context(), "s1"); len(m) != 0 {
		t.Errorf("%d messages stored by a store that refused every write", len(m))
	}
}

// A broken journal heals with the first write that succeeds: the writes
// kept in memory land, in order, and new barriers pass again.
func TestJournalHealsAfterBreaking(t *testing.T) {
	j, fs, rep := newFullJournal(t, true)
	j.policy = fastRetries
	fs.full.Store(true)
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "kept"}, "", "", time.Now())
	if err := <-j.barrier(); !errors.Is(err, ErrNotSaved) {
		t.Fatalf("barrier while full = %v", err)
	}
	fs.full.Store(false)
	waitFor(t, func() bool { return j.brokenErr() == nil })
	if err := <-j.barrier(); err != nil {
		t.Fatalf("barrier after recovery = %v", err)
	}
	if got := storedTexts(t, fs); got != "user:kept" {
		t.Errorf("stored %q", got)
	}
	if err := j.close(); err != nil {
		t.Errorf("close = %v", err)
	}
	if r := rep.list(); len(r) == 0 || r[len(r)-1] != nil {
		t.Errorf("reports = %v, want the recovery last", r)
	}
}

// A write the store rejects is counted, and the next barrier says the
// history is not complete instead of passing.
func TestJournalRejectedWriteFailsTheBarrier(t *testing.T) {
	st := openStore(t)
	newSession(t, st, "s1")
	j := newJournal(st, zerolog.Nop())
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "fine"}, "", "", time.Now())
	j.appendMessage("no-such-session", llm.Message{Role: llm.RoleUser, Content: "rejected"}, "", "", time.Now())
	if err := <-j.barrier(); !errors.Is(err, ErrNotSaved) {
		t.Fatalf("barrier after a rejected write = %v, want ErrNotSaved", err)
	}
	if err := <-j.barrier(); err != nil {
		t.Errorf("the next barrier = %v, want nil: the loss was told once", err)
	}
	if err := j.close(); !errors.Is(err, ErrNotSaved) {
		t.Errorf("close = %v", err)
	}
}

// slowStore is a real SQLite store whose commits are late: a batch holds
// its transaction open for delay after its writes, and a write outside a
// batch waits delay before it starts, as under a busy writer.
type slowStore struct {
	store.Store
	delay time.Duration
}

func (s slowStore) Batch(ctx context.Context, fn func(context.Context) error) error {
	b := s.Store.(batcher)
	if inOuter(ctx) {
		return b.Batch(ctx, fn)
	}
	return b.Batch(context.WithValue(ctx, outerKey{}, true), func(ctx context.Context) error {
		if err := fn(ctx); err != nil {
			return err
		}
		time.Sleep(s.delay)
		return nil
	})
}

func (s slowStore) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	if !inOuter(ctx) {
		time.Sleep(s.delay)
	}
	return s.Store.AppendMessage(ctx, m)
}

func (s slowStore) UpdateMessage(ctx context.Context, m store.Message) error {
	if !inOuter(ctx) {
		time.Sleep(s.delay)
	}
	return s.Store.UpdateMessage(ctx, m)
}

// TurnFinished is published only once the turn's input, the tool call and
// its result and the final answer are committed: read from the store the
// moment the event arrives, they are all there. With commits held back,
// the old Orchestrator announced the turn first.
func TestTurnFinishedOnlyAfterCommit(t *testing.T) {
	st := openStore(t)
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("Echo", map[string]any{"text": "one"})),
		llmtest.Reply("answer one"),
		llmtest.Reply("answer two"),
	)
	h := newHarness(t, script, func(d *Deps) {
		withStore(st)(d)
		d.Store = slowStore{Store: st, delay: 150 * time.Millisecond}
	})
	for i, q := range []string{"question one", "question two"} {
		h.sess.Submit(q, messages.ModeAsk)
		res := h.turn()
		if res.Status != messages.TurnDone || res.NotSaved != "" {
			t.Fatalf("turn %d = %+v", i+1, res)
		}
		got := storedTexts(t, st)
		for _, want := range []string{"user:" + q, "assistant:" + res.Answer} {
			if !strings.Contains(got, want) {
				t.Fatalf("turn %d announced before %q was committed; the store has %q", i+1, want, got)
			}
		}
		if i == 0 {
			msgs, err := st.Messages(t.Context(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			var results int
			for _, m := range msgs {
				results += len(m.ToolResults())
			}
			if results != 1 {
				t.Fatalf("turn 1 announced with %d tool results committed, want 1", results)
			}
		}
	}
}

// A store that refuses every write: the turn still ends, its result says
// it is not saved and an error notice says so; the session takes no new
// turn until the store accepts writes again.
func TestTurnNotSavedStopsTheSession(t *testing.T) {
	st := openStore(t)
	fs := &fullStore{Store: st}
	script := llmtest.NewScript().Add("orchestrator", llmtest.Reply("an answer"), llmtest.Reply("never sent"))
	h := newHarness(t, script, func(d *Deps) {
		withStore(st)(d)
		d.Store = batchingFullStore{fs}
	})
	h.sess.j.policy = fastRetries
	fs.full.Store(true)
	h.sess.Submit("question", messages.ModeAsk)
	tf, seen := next[messages.TurnFinished](h)
	res := tf.Result
	if res.Answer != "an answer" || !strings.Contains(res.NotSaved, "could not be saved") || !strings.Contains(res.NotSaved, "disk is full") {
		t.Fatalf("turn = %+v, want the answer with NotSaved naming the cause", res)
	}
	var told bool
	for _, ev := range seen {
		if n, ok := ev.(messages.Notice); ok && n.Level == "error" && strings.Contains(n.Text, "not saved") {
			told = true
		}
	}
	if !told {
		t.Errorf("no error notice that the turn is not saved; events: %s", eventTypes(seen))
	}

	h.sess.Submit("another question", messages.ModeAsk)
	res = h.turn()
	if res.Status != messages.TurnFailed || !strings.Contains(res.Error, "cannot be saved") {
		t.Fatalf("turn on a stopped session = %+v, want it refused", res)
	}
	if n := len(h.client.RequestsFor("orchestrator")); n != 1 {
		t.Errorf("%d model requests, want 1: a stopped session must not run a turn", n)
	}
}

// busyStore is busy on every path: the writer may take the message alone,
// before the barrier is queued, and a lone write runs outside Batch.
type busyStore struct{ flakyStore }

func (b *busyStore) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	if inOuter(ctx) || b.left.Add(-1) < 0 {
		return b.Store.AppendMessage(ctx, m)
	}
	b.attempts.Add(1)
	return store.Message{}, fmt.Errorf("store: append: %w", context.DeadlineExceeded)
}

// A busy store is waited for, not given up on: attempts that time out for
// far longer than a full disk's patience still end with every write
// stored and the barrier passing, because load explains them.
func TestJournalWaitsOutABusyStore(t *testing.T) {
	st := openStore(t)
	newSession(t, st, "s1")
	fs := &busyStore{flakyStore{Store: st}}
	fs.left.Store(1 << 20)
	j := newJournal(fs, zerolog.Nop())
	j.policy = fastRetries
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "patient"}, "", "", time.Now())
	barrier := j.barrier()
	waitFor(t, func() bool { s := j.Stats(); return s.Failing && s.Retries > 3 })
	time.Sleep(3 * fastRetries.lasting) // past the patience for a full disk
	if err := j.brokenErr(); err != nil {
		t.Fatalf("the journal broke on a busy store: %v", err)
	}
	fs.left.Store(0)
	select {
	case err := <-barrier:
		if err != nil {
			t.Fatalf("barrier = %v, want nil once the store had time", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the barrier never answered")
	}
	if got := storedTexts(t, st); got != "user:patient" {
		t.Errorf("stored %q", got)
	}
	if err := j.close(); err != nil {
		t.Errorf("close = %v", err)
	}
}

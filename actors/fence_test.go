package actors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/pgtest"
	"github.com/odin-code/odin/messages"
)

// fenceBackend opens two stores on one database, as two processes would:
// the zombie's and the new owner's.
type fenceBackend struct {
	name string
	open func(t *testing.T) (a, b store.Store)
}

// fenceBackends are SQLite (two stores on one file) and PostgreSQL (two
// pools on one database of a server started for the test).
func fenceBackends() []fenceBackend {
	return []fenceBackend{
		{"sqlite", func(t *testing.T) (store.Store, store.Store) {
			path := filepath.Join(t.TempDir(), "odin.db")
			return openFile(t, path), openFile(t, path)
		}},
		{"postgres", func(t *testing.T) (store.Store, store.Store) {
			srv := pgtest.New(t)
			url := srv.Database(t)
			return openURL(t, url), openURL(t, url)
		}},
	}
}

func openFile(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openURL(t *testing.T, url string) store.Store {
	t.Helper()
	st, err := store.OpenURL(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func claim(t *testing.T, st store.Store, id, node string) *store.Fenced {
	t.Helper()
	h, err := st.(store.Claimer).Claim(context.Background(), id, node)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// exportAll is everything stored about session id and its children, as
// bytes: the JSONL export (messages, tools, todos, usage, children) plus
// the agent runs and the project's checkpoints with their snapshots.
func exportAll(t *testing.T, st store.Store, id, project string) []byte {
	t.Helper()
	ctx := context.Background()
	var buf bytes.Buffer
	if err := store.ExportJSONL(ctx, st, &buf, id); err != nil {
		t.Fatal(err)
	}
	runs, err := st.AgentRuns(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cps, err := st.Checkpoints(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&buf, "\nruns %+v\ncheckpoints %+v\n", runs, cps)
	for _, cp := range cps {
		snaps, err := st.Snapshots(ctx, cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&buf, "snapshots %s %+v\n", cp.ID, snaps)
	}
	return buf.Bytes()
}

// countingBatches counts the journal's attempts: each outer Batch is one.
type countingBatches struct {
	*store.Fenced
	attempts atomic.Int32
}

type nestedKey struct{}

func (c *countingBatches) Batch(ctx context.Context, fn func(context.Context) error) error {
	if ctx.Value(nestedKey{}) == nil {
		c.attempts.Add(1)
		ctx = context.WithValue(ctx, nestedKey{}, true)
	}
	return c.Fenced.Batch(ctx, fn)
}

// Every kind of write the journal makes, sent through a claim that a later
// one superseded, is refused with ErrFenced at its first attempt and never
// tried again: the journal stops (its goroutine ends), drops what it
// holds, answers barriers with a TakenOverError naming the new epoch, and
// tells the session once. Nothing stored changes.
func TestJournalStopsAtErrFenced(t *testing.T) {
	for _, be := range fenceBackends() {
		t.Run(be.name, func(t *testing.T) {
			st, other := be.open(t)
			ctx := t.Context()
			sess, err := st.CreateSession(ctx, store.Session{ID: "s1", Project: "/p", Agent: store.AgentOrchestrator})
			if err != nil {
				t.Fatal(err)
			}
			old := claim(t, st, sess.ID, "node-a")
			// Something stored by the old owner, to be left as it is.
			w := newJournal(old, zerolog.Nop())
			w.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "before"}, "", "", time.Now())
			reply := w.startReply("s1", "m", time.Now())
			reply.event(llm.Event{Kind: llm.EventText, Text: "streamed before"})
			if err := <-w.barrier(); err != nil {
				t.Fatal(err)
			}
			if err := w.close(); err != nil {
				t.Fatal(err)
			}
			owner := claim(t, other, sess.ID, "node-b")
			if owner.Epoch() != old.Epoch()+1 {
				t.Fatalf("epochs %d then %d", old.Epoch(), owner.Epoch())
			}
			before := exportAll(t, st, "s1", "/p")

			now := time.Now()
			for _, tc := range []struct {
				name  string
				write func(j *journal)
			}{
				{"message", func(j *journal) {
					j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "zombie"}, "", "", now)
				}},
				{"tool result", func(j *journal) {
					j.appendResult("s1", toolResult{msg: llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Name: "Echo", Content: "x"}}, now)
				}},
				{"streaming save (update)", func(j *journal) {
					// The old owner's half-streamed reply, completed in
					// place by the zombie: the spike's double answer.
					reply.j = j
					reply.finish(llm.Message{Role: llm.RoleAssistant, Content: "completed by a zombie"}, llm.FinishStop, now, "")
				}},
				{"streaming save (append)", func(j *journal) {
					j.startReply("s1", "m", now).event(llm.Event{Kind: llm.EventText, Text: "zombie"})
				}},
				{"child session", func(j *journal) {
					j.createChild(store.Session{ID: "kid", ParentID: "s1", Project: "/p", Agent: "search", Title: "t", Mode: "ask", Model: "m", CreatedAt: now, UpdatedAt: now})
				}},
				{"title", func(j *journal) { j.setTitle("s1", "zombie") }},
				{"model", func(j *journal) { j.setModel("s1", "zombie-model") }},
				{"todos", func(j *journal) { j.todos("s1", []messages.Todo{{ID: "1", Content: "zombie", Status: "pending"}}) }},
				{"usage", func(j *journal) { j.usage("s1", "orchestrator", "m", messages.Usage{PromptTokens: 1, Cost: 1}, now) }},
				{"tool record", func(j *journal) {
					j.tool("s1", "orchestrator", callOutcome{call: llm.ToolCall{ID: "c1", Name: "Echo"}}, nil, now)
				}},
				{"agent run", func(j *journal) { j.agentRun("s1", messages.AgentRun{ID: "r1", Agent: "search"}, now) }},
				{"reading entry", func(j *journal) {
					j.afterWrites(func(ctx context.Context, st store.Store) error {
						st.(*countingBatches).attempts.Add(1) // not a batch
						_, err := st.Messages(ctx, "s1")
						if err == nil {
							// No repair was due, so nothing was fenced:
							// write, as the specialist's reader would not.
							_, err = st.AppendMessage(ctx, store.Message{SessionID: "s1", Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "zombie"}}})
						}
						return err
					})
				}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					cb := &countingBatches{Fenced: old}
					j := newJournal(cb, zerolog.Nop())
					j.policy = fastRetries
					var mu sync.Mutex
					var told []*TakenOverError
					j.onFenced = func(to *TakenOverError) { mu.Lock(); told = append(told, to); mu.Unlock() }
					tc.write(j)
					// Queued behind the fenced write: dropped unwritten.
					j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "queued behind"}, "", "", now)
					var berr error
					select {
					case berr = <-j.barrier():
					case <-time.After(20 * time.Second):
						t.Fatal("the barrier never answered")
					}
					select {
					case <-j.stopped:
					case <-time.After(20 * time.Second):
						t.Fatal("the journal still runs after ErrFenced: it is retrying")
					}
					var to *TakenOverError
					if !errors.As(berr, &to) || !errors.Is(berr, store.ErrFenced) || !errors.Is(berr, ErrNotSaved) {
						t.Fatalf("barrier = %v, want ErrNotSaved with a TakenOverError wrapping ErrFenced", berr)
					}
					if to.Epoch != owner.Epoch() || !strings.Contains(berr.Error(), fmt.Sprintf("session taken over by another process (epoch %d)", owner.Epoch())) {
						t.Errorf("barrier = %v, want the new owner's epoch %d", berr, owner.Epoch())
					}
					// One batch, or none when the writer took the lone entry
					// outside Batch (it may, before the barrier is queued);
					// never a second: ErrFenced is not retried.
					if n := cb.attempts.Load(); n > 1 {
						t.Errorf("%d attempts, want at most 1: ErrFenced is never retried", n)
					}
					if s := j.Stats(); s.Retries != 0 || s.Queued != 0 {
						t.Errorf("stats %+v, want no retry and nothing queued", s)
					}
					mu.Lock()
					if len(told) != 1 || told[0].Epoch != owner.Epoch() {
						t.Errorf("onFenced told %v, want once with epoch %d", told, owner.Epoch())
					}
					mu.Unlock()
					// Later writes are dropped; barriers keep answering.
					j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "after"}, "", "", now)
					if err := <-j.barrier(); !errors.Is(err, store.ErrFenced) {
						t.Errorf("a later barrier = %v", err)
					}
					if err := j.close(); !errors.As(err, &to) {
						t.Errorf("close = %v, want the TakenOverError", err)
					}
					if after := exportAll(t, st, "s1", "/p"); !bytes.Equal(before, after) {
						t.Fatalf("the zombie changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
					}
				})
			}
			// The new owner writes on.
			if _, err := owner.AppendMessage(ctx, store.Message{SessionID: "s1", Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "owner"}}}); err != nil {
				t.Fatalf("the new owner's write: %v", err)
			}
		})
	}
}

// withClaim creates session s1 in st and runs the harness's session
// through a claim on it (as startSession does), returned in *h.
func withClaim(st store.Store, h **store.Fenced) harnessOpt {
	return func(d *Deps) {
		ctx := context.Background()
		if _, err := st.CreateSession(ctx, store.Session{ID: "s1", Project: d.Root, Agent: store.AgentOrchestrator}); err != nil {
			panic(err)
		}
		c, err := st.(store.Claimer).Claim(ctx, "s1", "node-a")
		if err != nil {
			panic(err)
		}
		*h = c
		d.Store = c
	}
}

// The zombie at the session level, on both backends: session A runs a
// turn at epoch 1 (messages, a tool, a specialist's transcript, usage,
// todos); process B claims the session (epoch 2) and writes. A's next
// turn stops at its first write: A publishes session_fenced with epoch 2,
// the turn ends saying the session was taken over, the next input is
// refused without a model call, A's Close reports it; every kind of
// write through A's handle (the one its journal and checkpoints use)
// returns ErrFenced; and the stored history is byte-identical from B's
// claim on.
func TestSessionTakenOver(t *testing.T) {
	for _, be := range fenceBackends() {
		t.Run(be.name, func(t *testing.T) {
			st, other := be.open(t)
			s := llmtest.NewScript().
				Add("orchestrator",
					llmtest.Calls(llmtest.Call("Echo", map[string]any{"text": "hi"}), delegation("search", "look", "look around")),
					llmtest.Reply("first answer"),
					llmtest.Calls(llmtest.Call("Echo", map[string]any{"text": "zombie"})),
					llmtest.Reply("zombie answer"),
					llmtest.Reply("never asked"),
				).
				Add("search", searchReport("nothing special"))
			var a *store.Fenced
			h := newHarness(t, s, withClaim(st, &a))
			h.sess.Submit("first question", messages.ModeAsk)
			if r := h.turn(); r.Status != messages.TurnDone || r.NotSaved != "" {
				t.Fatalf("first turn = %+v", r)
			}
			if err := <-h.sess.j.barrier(); err != nil {
				t.Fatal(err)
			}
			if a.Epoch() != 1 {
				t.Fatalf("A's epoch = %d, want 1", a.Epoch())
			}
			project := h.root
			if err := st.SetTodos(t.Context(), "s1", []store.Todo{{ID: "1", Content: "keep", Status: "pending"}}); err != nil {
				t.Fatal(err)
			}

			b := claim(t, other, "s1", "node-b")
			if b.Epoch() != 2 {
				t.Fatalf("B's epoch = %d, want 2", b.Epoch())
			}
			if _, err := b.AppendMessage(t.Context(), store.Message{SessionID: "s1", Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "B carries on"}}}); err != nil {
				t.Fatal(err)
			}
			before := exportAll(t, st, "s1", project)
			calls := len(h.client.RequestsFor("orchestrator"))

			h.sess.Submit("second question", messages.ModeAsk)
			fenced, _ := next[messages.SessionFenced](h)
			if fenced.Epoch != 2 || !strings.Contains(fenced.Reason, "session taken over by another process (epoch 2)") {
				t.Errorf("session_fenced = %+v", fenced)
			}
			r := h.turn()
			if !strings.Contains(r.NotSaved, "session taken over by another process (epoch 2)") {
				t.Errorf("second turn = %s %q, not saved %q: want it to say the session was taken over", r.Status, r.Error, r.NotSaved)
			}
			if r.Status == messages.TurnCancelled && !strings.Contains(r.Error, "taken over") {
				t.Errorf("second turn cancelled for %q", r.Error)
			}

			h.sess.Submit("third question", messages.ModeAsk)
			r = h.turn()
			if r.Status != messages.TurnFailed || !strings.Contains(r.Error, "not started: session taken over by another process (epoch 2)") {
				t.Errorf("third turn = %s %q, want refused as taken over", r.Status, r.Error)
			}
			if n := len(h.client.RequestsFor("orchestrator")); n > calls+2 {
				t.Errorf("%d model calls after the takeover, want at most the second turn's 2 and none for the refused input", n-calls)
			}
			if s := h.sess.JournalStats(); s.Retries != 0 {
				t.Errorf("journal stats %+v: ErrFenced was retried", s)
			}

			// Every write kind through A's handle is refused.
			ctx := t.Context()
			all, err := st.AllMessages(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			first := all[0]
			first.Parts = []store.Part{store.TextPart{Text: "rewritten by a zombie"}}
			title := "zombie"
			changes := &checkpointWriter{st: h.deps.Store, session: "s1", project: project}
			for _, w := range []struct {
				name string
				fn   func() error
			}{
				{"AppendMessage", func() error {
					_, err := h.deps.Store.AppendMessage(ctx, store.Message{SessionID: "s1", Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "z"}}})
					return err
				}},
				{"UpdateMessage (streaming save)", func() error { return h.deps.Store.UpdateMessage(ctx, first) }},
				{"RecordTool", func() error {
					return h.deps.Store.RecordTool(ctx, store.ToolRecord{SessionID: "s1", CallID: "z", Name: "Echo"})
				}},
				{"AddUsage", func() error {
					return h.deps.Store.AddUsage(ctx, store.UsageRecord{SessionID: "s1", PromptTokens: 1, Cost: 1})
				}},
				{"PutAgentRun", func() error {
					return h.deps.Store.PutAgentRun(ctx, store.AgentRunRecord{ID: "r", SessionID: "s1", Data: []byte(`{}`)})
				}},
				{"SetTodos", func() error { return h.deps.Store.SetTodos(ctx, "s1", nil) }},
				{"UpdateSession", func() error { return h.deps.Store.UpdateSession(ctx, "s1", store.SessionUpdate{Title: &title}) }},
				{"checkpoint", changes.write},
			} {
				if err := w.fn(); !errors.Is(err, store.ErrFenced) {
					t.Errorf("%s through A = %v, want ErrFenced", w.name, err)
				}
			}

			err = h.sess.Close(ctx)
			var to *TakenOverError
			if !errors.As(err, &to) || to.Epoch != 2 {
				t.Errorf("A's Close = %v, want the TakenOverError at epoch 2", err)
			}
			if after := exportAll(t, st, "s1", project); !bytes.Equal(before, after) {
				t.Fatalf("A changed the store after B's claim:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// checkpointWriter makes the writes of a change set (cmd's changeSets):
// a checkpoint, a file's snapshot, its after-hashes.
type checkpointWriter struct {
	st               store.Store
	session, project string
}

func (c *checkpointWriter) write() error {
	ctx := context.Background()
	cp, err := c.st.CreateCheckpoint(ctx, store.Checkpoint{SessionID: c.session, Project: c.project, Label: "zombie"})
	if err != nil {
		return err
	}
	if _, err := c.st.AddSnapshot(ctx, cp.ID, store.FileSnapshot{Path: c.project + "/a.go", Content: []byte("x")}); err != nil {
		return err
	}
	return c.st.SetAfterHashes(ctx, cp.ID, map[string]string{c.project + "/a.go": "h"})
}

// A detached agent run does not outlive its session's takeover: when the
// session finds it was taken over, the run is stopped with the reason,
// and its work (held at the model) never reaches the new owner's history.
func TestTakeoverStopsDetachedRuns(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(bg("search", "slow look", "look slowly")),
			llmtest.Step{When: "Started search run", ToolCalls: []llmtest.ToolCall{llmtest.Call(AgentStopToolName, map[string]any{"id": "search-1", "detach": true})}},
			llmtest.Step{When: "detached", Text: "left it working"},
			llmtest.Step{When: "next question", Text: "never stored"},
		).
		Add("search", llmtest.Step{Hold: "s", ToolCalls: searchReport("zombie result").ToolCalls})
	st, other := fenceBackends()[0].open(t)
	var a *store.Fenced
	h := newHarness(t, s, withClaim(st, &a))
	h.sess.Submit("start something slow", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnDone {
		t.Fatalf("turn = %+v", r)
	}
	if run := runsByHandle(t, h)["search-1"]; run.Status != messages.RunRunning || !run.Detached {
		t.Fatalf("detached run = %+v", run)
	}
	claim(t, other, "s1", "node-b")
	before := exportAll(t, st, "s1", h.root)

	h.sess.Submit("next question", messages.ModeAsk)
	next[messages.SessionFenced](h)
	h.turn()
	waitFor(t, func() bool { return runsByHandle(t, h)["search-1"].Status == messages.RunStopped })
	if run := runsByHandle(t, h)["search-1"]; !strings.Contains(run.Summary, "taken over by another process") {
		t.Errorf("stopped run = %+v, want the takeover as the reason", run)
	}
	h.client.Release("s")
	time.Sleep(100 * time.Millisecond) // a stray report would be written by now
	if after := exportAll(t, st, "s1", h.root); !bytes.Equal(before, after) {
		t.Fatalf("the taken-over session wrote:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestJournalFencedFromOutsideTellsOnce: a write outside the journal (the
// input ledger's) meets the later claim first and fences the journal from
// its own goroutine; the journal's own write then meets it too. onFenced
// is told once, the writer stops, and a barrier queued behind the
// writer's batch is still answered with the takeover.
func TestJournalFencedFromOutsideTellsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odin.db")
	st, other := openFile(t, path), openFile(t, path)
	if _, err := st.CreateSession(t.Context(), store.Session{ID: "s1", Project: "/p", Agent: store.AgentOrchestrator}); err != nil {
		t.Fatal(err)
	}
	old := claim(t, st, "s1", "node-a")
	claim(t, other, "s1", "node-b")
	j := newJournal(old, zerolog.Nop())
	var told atomic.Int32
	j.onFenced = func(*TakenOverError) { told.Add(1) }
	// The ledger's write, refused by the later claim.
	_, err := old.AppendMessage(t.Context(), store.Message{SessionID: "s1", Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "x"}}})
	if !errors.Is(err, store.ErrFenced) {
		t.Fatalf("write through the old claim: %v, want ErrFenced", err)
	}
	j.appendMessage("s1", llm.Message{Role: llm.RoleUser, Content: "racing"}, "", "", time.Now())
	barrier := j.barrier()
	j.fence(err)
	select {
	case berr := <-barrier:
		if !errors.Is(berr, store.ErrFenced) {
			t.Errorf("barrier = %v, want the takeover", berr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the barrier was never answered")
	}
	select {
	case <-j.stopped:
	case <-time.After(20 * time.Second):
		t.Fatal("the writer still runs after the journal was fenced")
	}
	if n := told.Load(); n != 1 {
		t.Errorf("onFenced told %d times, want once", n)
	}
}

package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/storetest"
)

// The crash test re-runs this test binary as a writer that is killed with
// SIGKILL; these variables make TestMain play that role.
const (
	envCrashChild = "ODIN_STORE_CRASH_CHILD"
	envCrashDB    = "ODIN_STORE_CRASH_DB"
	envCrashSess  = "ODIN_STORE_CRASH_SESSION"
)

func TestMain(m *testing.M) {
	if os.Getenv(envCrashChild) != "" {
		if err := crashChild(os.Getenv(envCrashDB), os.Getenv(envCrashSess)); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Every Store closes its connection pools; none may leave a goroutine.
	goleak.VerifyTestMain(m)
}

func openTemp(t testing.TB, opts ...store.Option) *store.SQLite {
	t.Helper()
	s, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "odin.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}

func TestDefaultPath(t *testing.T) {
	if got, want := store.DefaultPath("/home/u/.local/state"), "/home/u/.local/state/odin/odin.db"; got != want {
		t.Errorf("DefaultPath = %q, want %q", got, want)
	}
}

func TestOpenAwkwardPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my state?#%20 dir", "nested")
	path := filepath.Join(dir, "odin.db")
	s, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(t.Context(), store.Session{Project: "/p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the exact path given: %v", err)
	}
	if _, err := store.Open(t.Context(), ""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Open(\"\") = %v, want ErrInvalid", err)
	}
}

func TestMigrationsUpgradeOldDatabase(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "odin.db")
	old, err := store.Open(ctx, path, store.WithSchemaForTest(1))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := old.AppliedVersions(ctx); !cmp.Equal(v, []int{1}) {
		t.Fatalf("old database at versions %v, want [1]", v)
	}
	// Version 1 has no checkpoints: this really is an old schema.
	if _, err := old.CreateCheckpoint(ctx, store.Checkpoint{Project: "/p"}); err == nil {
		t.Fatal("checkpoints work on a version-1 database")
	}
	sess, err := old.CreateSession(ctx, store.Session{Project: "/p", Title: "from v1"})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := old.AppendMessage(ctx, store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "kept"}}})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()

	for range 2 { // the second open finds nothing to do
		s, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.AppliedVersions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []int{}
		for i := 1; i <= store.SchemaVersion(); i++ {
			want = append(want, i)
		}
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("versions after upgrade (-want +got):\n%s", diff)
		}
		got, err := s.AllMessages(ctx, sess.ID)
		if err != nil || len(got) != 1 || got[0].Text() != "kept" || got[0].ID != msg.ID {
			t.Errorf("v1 data after upgrade: %+v, %v", got, err)
		}
		if _, err := s.CreateCheckpoint(ctx, store.Checkpoint{Project: "/p"}); err != nil {
			t.Errorf("checkpoints after upgrade: %v", err)
		}
		if err := s.CachePut(ctx, "k", []byte("v"), time.Time{}); err != nil {
			t.Errorf("cache after upgrade: %v", err)
		}
		s.Close()
	}
	if store.SchemaVersion() < 3 {
		t.Errorf("SchemaVersion = %d, want at least 3", store.SchemaVersion())
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "odin.db")
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, '0099_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := store.Open(ctx, path); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Errorf("Open of a newer database = %v, want ErrSchemaTooNew", err)
	}
}

// Two terminals starting Odin at once on a fresh machine race to create
// and migrate the file; both must succeed and migrate it once.
func TestConcurrentOpenOfFreshFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "odin.db")
	const n = 32
	stores := make([]*store.SQLite, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = store.Open(ctx, path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Open %d: %v", i, errs[i])
		}
		defer stores[i].Close()
	}
	v, err := stores[0].AppliedVersions(ctx)
	if err != nil || len(v) != store.SchemaVersion() {
		t.Errorf("versions %v (%v); want each migration once", v, err)
	}
}

// A second connection (another Store on the same file, as another
// terminal would have) sees each committed write at once, and writes from
// both interleave safely.
func TestSecondConnectionSeesWrites(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "odin.db")
	a, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sess, err := a.CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		w := a
		if i%2 == 0 {
			w = b
		}
		m, err := w.AppendMessage(ctx, store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: fmt.Sprint(i)}}})
		if err != nil {
			t.Fatal(err)
		}
		if m.Seq != int64(i) {
			t.Fatalf("append %d got seq %d", i, m.Seq)
		}
		for name, r := range map[string]*store.SQLite{"a": a, "b": b} {
			all, err := r.AllMessages(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != i || all[i-1].Text() != fmt.Sprint(i) {
				t.Fatalf("connection %s sees %d messages after append %d", name, len(all), i)
			}
		}
	}
}

// crashChild appends turns (an assistant tool call, then its result) as
// fast as it can, printing each committed sequence number, until killed.
func crashChild(path, sessionID string) error {
	ctx := context.Background()
	s, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		m, err := s.AppendMessage(ctx, crashCall(sessionID, i))
		if err != nil {
			return err
		}
		fmt.Printf("%d\n", m.Seq)
		m, err = s.AppendMessage(ctx, crashResult(sessionID, i))
		if err != nil {
			return err
		}
		fmt.Printf("%d\n", m.Seq)
	}
}

func crashCall(sessionID string, i int) store.Message {
	return store.Message{SessionID: sessionID, Role: llm.RoleAssistant, Parts: []store.Part{
		store.TextPart{Text: fmt.Sprintf("turn %d: %s", i, strings.Repeat("reading files ", 40))},
		store.ToolCallPart{ID: fmt.Sprintf("call-%d", i), Name: "ReadFile", Input: `{"path":"main.go"}`, Finished: true},
	}}
}

func crashResult(sessionID string, i int) store.Message {
	return store.Message{SessionID: sessionID, Role: llm.RoleTool, Parts: []store.Part{
		store.ToolResultPart{ToolCallID: fmt.Sprintf("call-%d", i), Name: "ReadFile", Content: strings.Repeat("package main\n", 100)},
	}}
}

// TestKill9MidWrite kills a writing process with SIGKILL and checks that
// the file is intact, every commit it reported is there, the history is
// valid for the next request, and that this process saw each commit the
// moment it was reported.
func TestKill9MidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "odin.db")
	watcher, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	sess, err := watcher.CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashChild+"=1", envCrashDB+"="+path, envCrashSess+"="+sess.ID)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// An odd count stops the child just after it committed a tool call,
	// usually before its result: the case Messages must repair.
	const commits, watched = 301, 40
	lines := bufio.NewScanner(out)
	var last int64
	for last < commits && lines.Scan() {
		seq, err := strconv.ParseInt(lines.Text(), 10, 64)
		if err != nil {
			t.Fatalf("child said %q", lines.Text())
		}
		if seq != last+1 {
			t.Fatalf("child committed seq %d after %d", seq, last)
		}
		last = seq
		if seq <= watched {
			all, err := watcher.AllMessages(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(all)) < seq {
				t.Fatalf("another process does not see commit %d yet (sees %d)", seq, len(all))
			}
		}
	}
	if last < commits {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child stopped after %d commits: %v\n%s", last, lines.Err(), stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	werr := cmd.Wait()
	if ee := (*exec.ExitError)(nil); !errors.As(werr, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("child was not killed by a signal: %v\n%s", werr, stderr.String())
	}

	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res, err := s.IntegrityCheck(ctx); err != nil || res != "ok" {
		t.Fatalf("integrity_check = %q, %v", res, err)
	}
	all, err := s.AllMessages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(all)) < last {
		t.Fatalf("%d messages survived, but %d were reported committed", len(all), last)
	}
	for i, m := range all {
		turn := i / 2
		want := crashCall(sess.ID, turn)
		if i%2 == 1 {
			want = crashResult(sess.ID, turn)
		}
		if m.Seq != int64(i+1) || m.Role != want.Role {
			t.Fatalf("message %d: seq %d role %s, want seq %d role %s", i, m.Seq, m.Role, i+1, want.Role)
		}
		if diff := cmp.Diff(want.Parts, m.Parts); diff != "" {
			t.Fatalf("message %d content (-want +got):\n%s", i, diff)
		}
	}
	hist, err := s.Messages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	answered := map[string]bool{}
	for _, m := range hist {
		for _, r := range m.ToolResults() {
			answered[r.ToolCallID] = true
		}
	}
	for _, m := range hist {
		for _, c := range m.ToolCalls() {
			if !answered[c.ID] {
				t.Errorf("after the crash, call %s has no result", c.ID)
			}
		}
	}
	got, _ := s.Session(ctx, sess.ID)
	if got.MessageCount != int64(len(hist)) {
		t.Errorf("MessageCount %d, history has %d", got.MessageCount, len(hist))
	}
	t.Logf("child reported %d commits; %d stored; history after repair %d", last, len(all), len(hist))
}

// A batch commits its writes together; a write that fails inside it is
// undone alone (its savepoint) and reports its own error; a batch whose
// function fails stores nothing.
func TestBatch(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	sess, err := s.CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(text string) store.Message {
		return store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: text}}}
	}
	err = s.Batch(ctx, func(ctx context.Context) error {
		one := msg("one")
		one.ID = "m1"
		if _, err := s.AppendMessage(ctx, one); err != nil {
			return err
		}
		// Counted in the session, then refused by the insert: the
		// savepoint undoes both.
		dup := msg("lost")
		dup.ID = "m1"
		if _, err := s.AppendMessage(ctx, dup); !errors.Is(err, store.ErrExists) {
			t.Errorf("duplicate append in a batch: %v, want ErrExists", err)
		}
		_, err := s.AppendMessage(ctx, msg("two"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := s.Batch(ctx, func(ctx context.Context) error {
		if _, err := s.AppendMessage(ctx, msg("rolled back")); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("failed batch: %v", err)
	}
	msgs, err := s.Messages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Parts[0].(store.TextPart).Text)
	}
	if diff := cmp.Diff([]string{"one", "two"}, texts); diff != "" {
		t.Errorf("stored messages (-want +got):\n%s", diff)
	}
	if got, _ := s.Session(ctx, sess.ID); got.MessageCount != 2 {
		t.Errorf("message_count = %d, want 2 (the failed write's update undone)", got.MessageCount)
	}
}

// A batch within a batch is all or nothing inside the outer one.
func TestNestedBatchIsASavepoint(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	sess, err := s.CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(text string) store.Message {
		return store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: text}}}
	}
	boom := errors.New("boom")
	err = s.Batch(ctx, func(ctx context.Context) error {
		if _, err := s.AppendMessage(ctx, msg("kept")); err != nil {
			return err
		}
		if err := s.Batch(ctx, func(ctx context.Context) error {
			if _, err := s.AppendMessage(ctx, msg("half")); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Errorf("inner batch: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := s.Messages(ctx, sess.ID)
	if len(msgs) != 1 || msgs[0].Parts[0].(store.TextPart).Text != "kept" {
		t.Errorf("stored %+v, want only the outer batch's message", msgs)
	}
}

// TestWALFilesOutliveClose: the -wal and -shm files stay when the last
// connection closes (the next command opens them instead of creating
// them), the log checkpointed into the database and cut to at most 1 MiB,
// and a reopened store reads everything written before.
func TestWALFilesOutliveClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odin.db")
	s, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.CreateSession(t.Context(), store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 3<<20) // a log of several MiB before the close
	if _, err := s.AppendMessage(t.Context(), store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: big}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		fi, err := os.Stat(path + suffix)
		if err != nil {
			t.Fatalf("after Close: %v", err)
		}
		if suffix == "-wal" && fi.Size() > 1<<20 {
			t.Errorf("the log is %d bytes after Close, want at most 1 MiB", fi.Size())
		}
	}
	s, err = store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs, err := s.Messages(t.Context(), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || len(msgs[0].Parts) != 1 {
		t.Fatalf("reopened: %d messages, want the one written", len(msgs))
	}
	if tp, ok := msgs[0].Parts[0].(store.TextPart); !ok || tp.Text != big {
		t.Errorf("reopened: the message's text did not survive")
	}
}

// A batch whose context ends midway fails with the context's error at the
// next write and stores nothing of it, fenced writes included (savepoints
// and the fence's read run without watching the context: see stepCtx).
func TestBatchEndsWithItsContext(t *testing.T) {
	s := openTemp(t)
	sess, err := s.CreateSession(t.Context(), store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Claim(t.Context(), sess.ID, "node")
	if err != nil {
		t.Fatal(err)
	}
	msg := func(text string) store.Message {
		return store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: text}}}
	}
	type batchStore interface {
		store.Store
		Batch(ctx context.Context, fn func(ctx context.Context) error) error
	}
	for _, st := range []batchStore{s, h} {
		ctx, cancel := context.WithCancel(t.Context())
		err := st.Batch(ctx, func(ctx context.Context) error {
			if _, err := st.AppendMessage(ctx, msg("before")); err != nil {
				return err
			}
			cancel()
			_, err := st.AppendMessage(ctx, msg("after"))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%T: write after the context ended: %v, want context.Canceled", st, err)
			}
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%T: batch: %v, want context.Canceled", st, err)
		}
	}
	msgs, err := s.Messages(t.Context(), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 0 {
		t.Errorf("%d messages stored by cancelled batches, want none", len(msgs))
	}
	if got, _ := s.Session(t.Context(), sess.ID); got.MessageCount != 0 {
		t.Errorf("message_count = %d, want 0", got.MessageCount)
	}
}

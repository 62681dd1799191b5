package storetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
)

// testZombieWriter: claims at epoch 1 (A) and epoch 2 (B) on one session;
// every kind of write through A fails with ErrFenced and leaves what is
// stored byte-identical, while B still writes.
func testZombieWriter(t *testing.T, open Opener) {
	s := open(t)
	c, ok := s.(store.Claimer)
	if !ok {
		t.Skipf("%T does not implement store.Claimer", s)
	}
	ctx := t.Context()
	id := richSession(t, s)
	// A dangling call, so that Messages through A would want to write
	// its repair.
	mustAppend(t, s, call(id, "call_zombie", "ReadFile"))
	sess, err := s.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.CreateCheckpoint(ctx, store.Checkpoint{SessionID: id, Project: sess.Project, Label: "before"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSnapshot(ctx, cp.ID, store.FileSnapshot{Path: "/home/dev/proj/a.go", Existed: true, Mode: 0o644, Content: []byte("old")}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutAgentRun(ctx, store.AgentRunRecord{ID: "run-1", SessionID: id, Data: []byte(`{"status":"running"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CachePut(ctx, "k", []byte("v"), at(1)); err != nil {
		t.Fatal(err)
	}

	a, err := c.Claim(ctx, id, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Claim(ctx, id, "node-b")
	if err != nil {
		t.Fatal(err)
	}
	if a.Epoch() != 1 || b.Epoch() != 2 {
		t.Fatalf("epochs %d and %d, want 1 and 2", a.Epoch(), b.Epoch())
	}
	if a.Previous() != "" || b.Previous() != "node-a" {
		t.Errorf("previous owners %q and %q, want none and node-a", a.Previous(), b.Previous())
	}
	if _, err := c.Claim(ctx, "no-such-session", "node-c"); err == nil {
		t.Errorf("Claim of a missing session succeeded")
	} else {
		wantErr(t, "Claim of a missing session", err, store.ErrNotFound)
	}

	snapshot := func() []byte {
		t.Helper()
		var buf bytes.Buffer
		if err := store.ExportJSONL(ctx, s, &buf, id); err != nil {
			t.Fatal(err)
		}
		cps, err := s.Checkpoints(ctx, sess.Project)
		if err != nil {
			t.Fatal(err)
		}
		snaps, err := s.Snapshots(ctx, cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := s.AgentRuns(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		v, stored, ok, err := s.CacheGet(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&buf, "\n%+v\n%+v\n%+v\n%q %v %v\n", cps, snaps, runs, v, stored, ok)
		return buf.Bytes()
	}
	before := snapshot()
	all, err := s.AllMessages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	first := all[0]
	first.Parts = []store.Part{store.TextPart{Text: "rewritten by a zombie"}}
	archive := []store.SessionArchive{{Session: store.Session{ID: "imported", Project: sess.Project}}}

	for _, w := range []struct {
		name string
		fn   func() error
	}{
		{"AppendMessage", func() error { _, err := a.AppendMessage(ctx, text(id, llm.RoleUser, "zombie")); return err }},
		{"UpdateMessage", func() error { return a.UpdateMessage(ctx, first) }},
		{"AppendSummary", func() error {
			_, err := a.AppendSummary(ctx, text(id, llm.RoleAssistant, "zombie summary"))
			return err
		}},
		{"Messages (repair)", func() error { _, err := a.Messages(ctx, id); return err }},
		{"RecordTool", func() error { return a.RecordTool(ctx, store.ToolRecord{SessionID: id, CallID: "z", Name: "Bash"}) }},
		{"SetTodos", func() error { return a.SetTodos(ctx, id, nil) }},
		{"AddUsage", func() error { return a.AddUsage(ctx, store.UsageRecord{SessionID: id, PromptTokens: 1, Cost: 1}) }},
		{"UpdateSession", func() error { title := "zombie"; return a.UpdateSession(ctx, id, store.SessionUpdate{Title: &title}) }},
		{"CreateSession (child)", func() error { _, err := a.CreateSession(ctx, store.Session{ParentID: id}); return err }},
		{"DeleteSession", func() error { return a.DeleteSession(ctx, id) }},
		{"PutAgentRun", func() error {
			return a.PutAgentRun(ctx, store.AgentRunRecord{ID: "run-1", SessionID: id, Data: []byte(`{"status":"zombie"}`)})
		}},
		{"CreateCheckpoint", func() error {
			_, err := a.CreateCheckpoint(ctx, store.Checkpoint{SessionID: id, Project: sess.Project})
			return err
		}},
		{"AddSnapshot", func() error {
			_, err := a.AddSnapshot(ctx, cp.ID, store.FileSnapshot{Path: "/home/dev/proj/b.go", Content: []byte("x")})
			return err
		}},
		{"SetAfterHashes", func() error { return a.SetAfterHashes(ctx, cp.ID, map[string]string{"/home/dev/proj/a.go": "h"}) }},
		{"MarkRestored", func() error { return a.MarkRestored(ctx, cp.ID, at(9)) }},
		{"CachePut", func() error { return a.CachePut(ctx, "k", []byte("zombie"), at(9)) }},
		{"CachePrune", func() error { _, err := a.CachePrune(ctx, time.Now().Add(time.Hour)); return err }},
		{"Import", func() error { return a.Import(ctx, archive) }},
		{"Batch", func() error {
			return a.Batch(ctx, func(ctx context.Context) error {
				_, err := a.AppendMessage(ctx, text(id, llm.RoleUser, "zombie in a batch"))
				return err
			})
		}},
	} {
		wantErr(t, w.name+" through the superseded claim", w.fn(), store.ErrFenced)
	}
	if after := snapshot(); !bytes.Equal(before, after) {
		t.Errorf("the zombie's writes changed what is stored:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// The current claim writes, and the zombie stays fenced after it.
	m, err := b.AppendMessage(ctx, text(id, llm.RoleUser, "from the owner"))
	if err != nil {
		t.Fatalf("write through the current claim: %v", err)
	}
	if m.Seq != int64(len(all)+1) {
		t.Errorf("owner's message has seq %d, want %d", m.Seq, len(all)+1)
	}
	_, err = a.AppendMessage(ctx, text(id, llm.RoleUser, "zombie again"))
	wantErr(t, "AppendMessage through the superseded claim after the owner wrote", err, store.ErrFenced)
}

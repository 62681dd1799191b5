package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
)

// rewindFixture is a stored session of three messages whose second and
// third turns changed files (a.txt one→two, c.txt created), with their
// checkpoints as the CLI records them.
type rewindFixture struct {
	a        *app
	st       store.Store
	id       string
	aTxt     string
	cTxt     string
	cp2, cp3 string
}

func newRewindFixture(t *testing.T) *rewindFixture {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "proj")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	a, err := loadApp(&globalFlags{dir: root, logLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ctx := t.Context()
	st, err := a.openStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := &rewindFixture{a: a, st: st, aTxt: filepath.Join(a.root, "a.txt"), cTxt: filepath.Join(a.root, "c.txt")}
	s, err := st.CreateSession(ctx, store.Session{Project: a.root, Agent: store.AgentOrchestrator, Mode: "edit"})
	if err != nil {
		t.Fatal(err)
	}
	f.id = s.ID
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	say := func(role llm.Role, text string, at time.Time) {
		if _, err := st.AppendMessage(ctx, store.Message{SessionID: s.ID, Role: role, CreatedAt: at, Parts: []store.Part{store.TextPart{Text: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, content string) {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A turn's checkpoint as changeSets records it: the snapshot before
	// the first write, the after-hash once the turn ends.
	change := func(at time.Time, label, p, content string) string {
		before, err := os.ReadFile(p)
		existed := err == nil
		cp, err := st.CreateCheckpoint(ctx, store.Checkpoint{SessionID: s.ID, Project: a.root, Label: label, CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddSnapshot(ctx, cp.ID, store.FileSnapshot{Path: p, Existed: existed, Mode: 0o644, Content: before}); err != nil {
			t.Fatal(err)
		}
		write(p, content)
		if err := st.SetAfterHashes(ctx, cp.ID, map[string]string{p: checkpoint.HashFile(p)}); err != nil {
			t.Fatal(err)
		}
		return cp.ID
	}
	say(llm.RoleUser, "first: create a.txt", t0)
	write(f.aTxt, "one\n")
	say(llm.RoleAssistant, "first done", t0.Add(time.Second))
	say(llm.RoleUser, "second: change a.txt", t0.Add(time.Minute))
	f.cp2 = change(t0.Add(time.Minute+time.Second), "second", f.aTxt, "two\n")
	say(llm.RoleAssistant, "second done", t0.Add(time.Minute+2*time.Second))
	say(llm.RoleUser, "third: add c.txt", t0.Add(2*time.Minute))
	f.cp3 = change(t0.Add(2*time.Minute+time.Second), "third", f.cTxt, "sea\n")
	say(llm.RoleAssistant, "third done", t0.Add(2*time.Minute+2*time.Second))
	return f
}

func (f *rewindFixture) view(t *testing.T) string {
	t.Helper()
	msgs, err := f.st.Messages(t.Context(), f.id)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text())
	}
	return strings.Join(texts, "|")
}

// An interrupted rewind — killed after the newest change set's files were
// restored but before it was marked, the conversation untouched — is
// finished by the next rewind of the session, whatever message that one
// names: every step is idempotent, and nothing is restored twice.
func TestInterruptedRewindIsFinished(t *testing.T) {
	f := newRewindFixture(t)
	ctx := t.Context()
	j := &rewindJournal{Session: f.id, N: 2, Text: "second: change a.txt", Code: true, Conversation: true,
		Checkpoints: []string{f.cp3, f.cp2}, Marker: newID(), Started: time.Now()}
	msgs, err := f.st.Messages(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	j.Seq, j.LastSeq = msgs[2].Seq, msgs[len(msgs)-1].Seq
	if err := j.save(ctx, f.st); err != nil {
		t.Fatal(err)
	}
	// The kill: c.txt is already removed, its change set is not marked.
	if err := os.Remove(f.cTxt); err != nil {
		t.Fatal(err)
	}
	msg, err := f.a.rewind(ctx, f.id, 1, rewindScope{code: true, conversation: true}, false)
	if err != nil {
		t.Fatalf("finishing the interrupted rewind: %v", err)
	}
	if !strings.Contains(msg, "was interrupted; it is finished now") || !strings.Contains(msg, "c.txt unchanged") || !strings.Contains(msg, "a.txt restored") {
		t.Errorf("report = %q", msg)
	}
	if b, err := os.ReadFile(f.aTxt); err != nil || string(b) != "one\n" {
		t.Errorf("a.txt = %q, %v; want %q", b, err, "one\n")
	}
	if _, err := os.Stat(f.cTxt); !os.IsNotExist(err) {
		t.Errorf("c.txt exists after the rewind: %v", err)
	}
	if got, want := f.view(t), "first: create a.txt|first done"; got != want {
		t.Errorf("conversation = %q, want %q", got, want)
	}
	for _, id := range []string{f.cp2, f.cp3} {
		if cp, err := f.st.Checkpoint(ctx, id); err != nil || cp.RestoredAt.IsZero() {
			t.Errorf("checkpoint %s not marked restored: %+v %v", id, cp, err)
		}
	}
	// Finished: the journal is done, and the message named by that call
	// was not rewound on top (message 1 is still there).
	if j, err := loadRewindJournal(ctx, f.st, f.id); err != nil || j != nil {
		t.Errorf("journal after finishing = %+v, %v", j, err)
	}
	all, err := f.st.AllMessages(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6+3 { // the originals, the marker, the two kept copies
		t.Errorf("stored %d messages, want 9 (nothing deleted, nothing written twice)", len(all))
	}
}

// A session that went on after a rewind was interrupted is not rewound
// blindly: the conversation step is reported, not applied.
func TestInterruptedRewindOfASessionThatWentOn(t *testing.T) {
	f := newRewindFixture(t)
	ctx := t.Context()
	msgs, err := f.st.Messages(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	j := &rewindJournal{Session: f.id, N: 2, Seq: msgs[2].Seq, LastSeq: msgs[len(msgs)-1].Seq, Conversation: true, Marker: newID()}
	if err := j.save(ctx, f.st); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.AppendMessage(ctx, store.Message{SessionID: f.id, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "fourth"}}}); err != nil {
		t.Fatal(err)
	}
	before := f.view(t)
	_, err = f.a.rewind(ctx, f.id, 2, rewindScope{conversation: true}, false)
	if err == nil || !strings.Contains(err.Error(), "went on after the rewind was interrupted") {
		t.Fatalf("err = %v", err)
	}
	if after := f.view(t); after != before {
		t.Errorf("conversation changed: %q → %q", before, after)
	}
	// Reported once: the next rewind is not blocked by it.
	if _, err := f.a.rewind(ctx, f.id, 2, rewindScope{conversation: true}, false); err != nil {
		t.Fatalf("the rewind after the report: %v", err)
	}
	if got, want := f.view(t), "first: create a.txt|first done"; got != want {
		t.Errorf("conversation = %q, want %q", got, want)
	}
}

// Rewinding to the first message leaves an empty conversation: the model
// is told only that it was rewound.
func TestRewindToTheFirstMessage(t *testing.T) {
	f := newRewindFixture(t)
	if _, err := f.a.rewind(t.Context(), f.id, 1, rewindScope{code: true, conversation: true}, false); err != nil {
		t.Fatal(err)
	}
	if got := f.view(t); !strings.HasPrefix(got, "[Odin] The conversation was rewound to its start") || strings.Contains(got, "|") {
		t.Errorf("conversation = %q", got)
	}
	// a.txt existed before the first checkpointed change: restored to
	// what the second message found; the first turn had no checkpoint.
	if b, _ := os.ReadFile(f.aTxt); string(b) != "one\n" {
		t.Errorf("a.txt = %q", b)
	}
}

// A rewind started from another project is refused before it changes
// anything: its change sets and restore roots are the session's project's.
func TestRewindFromAnotherProject(t *testing.T) {
	f := newRewindFixture(t)
	other := filepath.Join(filepath.Dir(f.a.root), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := loadApp(&globalFlags{dir: other, logLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	before := f.view(t)
	_, err = b.rewind(t.Context(), f.id, 2, rewindScope{code: true, conversation: true}, false)
	if err == nil || !strings.Contains(err.Error(), "belongs to the project") {
		t.Fatalf("err = %v", err)
	}
	if got, _ := os.ReadFile(f.aTxt); string(got) != "two\n" {
		t.Errorf("a.txt = %q", got)
	}
	if after := f.view(t); after != before {
		t.Errorf("conversation changed: %q → %q", before, after)
	}
}

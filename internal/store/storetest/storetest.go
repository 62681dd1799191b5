package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
)

// Opener returns a fresh, empty store for one test and arranges its
// closing (t.Cleanup). The suite calls it once per subtest, and more than
// once in the tests that need a second, independent store.
type Opener func(t *testing.T) store.Store

// Run runs the conformance suite against the stores open makes.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"CreateAndGetSession", testCreateAndGetSession},
		{"CreateSessionErrors", testCreateSessionErrors},
		{"ListSessions", testListSessions},
		{"LatestSessionAndChildren", testLatestSessionAndChildren},
		{"UpdateSession", testUpdateSession},
		{"AppendAndRead", testAppendAndRead},
		{"AppendErrors", testAppendErrors},
		{"UpdateMessage", testUpdateMessage},
		{"SummaryCutsHistory", testSummaryCutsHistory},
		{"RepairDanglingToolCalls", testRepair},
		{"ConcurrentAppends", testConcurrentAppends},
		{"ToolHistory", testToolHistory},
		{"Todos", testTodos},
		{"UsageTotals", testUsageTotals},
		{"Stats", testStats},
		{"DeleteCascades", testDeleteCascades},
		{"Checkpoints", testCheckpoints},
		{"Cache", testCache},
		{"ExportImportRoundTrip", testRoundTrip},
		{"ImportErrors", testImportErrors},
		{"ExportMarkdown", testExportMarkdown},
		{"CancelledContext", testCancelledContext},
		{"ZombieWriter", testZombieWriter},
		{"InputsIdempotent", testInputsIdempotent},
		{"FinishInput", testFinishInput},
		{"Interrupted", testInterrupted},
		{"FencedInputs", testFencedInputs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// base is a fixed past instant: times the tests choose sort before any
// "now" the store stamps itself.
var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

const project = "/home/dev/proj"

func mustSession(t *testing.T, s store.Store, in store.Session) store.Session {
	t.Helper()
	if in.Project == "" && in.ParentID == "" {
		in.Project = project
	}
	out, err := s.CreateSession(t.Context(), in)
	if err != nil {
		t.Fatalf("CreateSession(%+v): %v", in, err)
	}
	return out
}

func mustAppend(t *testing.T, s store.Store, m store.Message) store.Message {
	t.Helper()
	out, err := s.AppendMessage(t.Context(), m)
	if err != nil {
		t.Fatalf("AppendMessage: %v", err)
	}
	return out
}

func text(session string, role llm.Role, s string) store.Message {
	return store.Message{SessionID: session, Role: role, Parts: []store.Part{store.TextPart{Text: s}}}
}

func call(session, id, name string) store.Message {
	return store.Message{SessionID: session, Role: llm.RoleAssistant, Parts: []store.Part{
		store.ToolCallPart{ID: id, Name: name, Input: `{"path":"a.go"}`, Finished: true},
	}}
}

func result(session, id, name string) store.Message {
	return store.Message{SessionID: session, Role: llm.RoleTool, Parts: []store.Part{
		store.ToolResultPart{ToolCallID: id, Name: name, Content: "ok"},
	}}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want %v", what, err, target)
	}
}

func ids(ss []store.Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

func seqs(ms []store.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.Seq
	}
	return out
}

func testCreateAndGetSession(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	before := time.Now()
	got := mustSession(t, s, store.Session{
		Title: "fix the parser", Agent: store.AgentOrchestrator, Mode: "edit", Model: "gpt-x",
		PromptTokens: 99, Cost: 3, MessageCount: 7, SummaryMessageID: "bogus", // ignored on create
	})
	after := time.Now()
	if got.ID == "" {
		t.Fatal("CreateSession left ID empty")
	}
	if got.CreatedAt.Before(before.Add(-time.Second)) || got.CreatedAt.After(after.Add(time.Second)) {
		t.Errorf("CreatedAt %v not around now (%v..%v)", got.CreatedAt, before, after)
	}
	if !got.UpdatedAt.Equal(got.CreatedAt) {
		t.Errorf("UpdatedAt %v, want CreatedAt %v", got.UpdatedAt, got.CreatedAt)
	}
	want := store.Session{
		ID: got.ID, Project: project, Title: "fix the parser", Agent: store.AgentOrchestrator, Mode: "edit",
		Model: "gpt-x", CreatedAt: got.CreatedAt, UpdatedAt: got.UpdatedAt,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CreateSession result (-want +got):\n%s", diff)
	}
	read, err := s.Session(ctx, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, read); diff != "" {
		t.Errorf("Session (-want +got):\n%s", diff)
	}

	fixed := mustSession(t, s, store.Session{ID: "chosen-id", CreatedAt: at(5)})
	if fixed.ID != "chosen-id" || !fixed.CreatedAt.Equal(at(5)) || !fixed.UpdatedAt.Equal(at(5)) {
		t.Errorf("explicit ID/time not kept: %+v", fixed)
	}
}

func testCreateSessionErrors(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	root := mustSession(t, s, store.Session{ID: "root"})
	tests := []struct {
		name string
		in   store.Session
		want error
	}{
		{"relative project", store.Session{Project: "proj"}, store.ErrInvalid},
		{"empty project", store.Session{}, store.ErrInvalid},
		{"missing parent", store.Session{ParentID: "nope"}, store.ErrNotFound},
		{"child in another project", store.Session{ParentID: root.ID, Project: "/elsewhere"}, store.ErrInvalid},
		{"duplicate id", store.Session{ID: "root", Project: project}, store.ErrExists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateSession(ctx, tc.in)
			wantErr(t, "CreateSession", err, tc.want)
		})
	}
	child := mustSession(t, s, store.Session{ParentID: root.ID, Agent: "code"})
	if child.Project != project || child.ParentID != root.ID {
		t.Errorf("child = %+v, want project %s and parent %s", child, project, root.ID)
	}
	_, err := s.Session(ctx, "missing")
	wantErr(t, "Session(missing)", err, store.ErrNotFound)
}

func testListSessions(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	a := mustSession(t, s, store.Session{ID: "a", CreatedAt: at(1)})
	b := mustSession(t, s, store.Session{ID: "b", CreatedAt: at(2)})
	c := mustSession(t, s, store.Session{ID: "c", CreatedAt: at(3)})
	other := mustSession(t, s, store.Session{ID: "other", Project: "/other", CreatedAt: at(4)})
	kid := mustSession(t, s, store.Session{ID: "kid", ParentID: b.ID, CreatedAt: at(5)})
	// A message makes a the most recently active session.
	m := text(a.ID, llm.RoleUser, "again")
	m.CreatedAt = at(10)
	mustAppend(t, s, m)

	tests := []struct {
		name string
		q    store.SessionQuery
		want []string
	}{
		{"project roots", store.SessionQuery{Project: project}, []string{a.ID, c.ID, b.ID}},
		{"with children", store.SessionQuery{Project: project, Children: true}, []string{a.ID, kid.ID, c.ID, b.ID}},
		{"limit", store.SessionQuery{Project: project, Limit: 2}, []string{a.ID, c.ID}},
		{"all projects", store.SessionQuery{}, []string{a.ID, other.ID, c.ID, b.ID}},
		{"unknown project", store.SessionQuery{Project: "/nowhere"}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Sessions(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
				t.Errorf("Sessions(%+v) (-want +got):\n%s", tc.q, diff)
			}
		})
	}
}

func testLatestSessionAndChildren(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	_, err := s.LatestSession(ctx, project)
	wantErr(t, "LatestSession on empty store", err, store.ErrNotFound)

	old := mustSession(t, s, store.Session{ID: "old", CreatedAt: at(1)})
	root := mustSession(t, s, store.Session{ID: "root", CreatedAt: at(2)})
	k2 := mustSession(t, s, store.Session{ID: "k2", ParentID: old.ID, CreatedAt: at(6)})
	k1 := mustSession(t, s, store.Session{ID: "k1", ParentID: old.ID, CreatedAt: at(5)})
	mustSession(t, s, store.Session{ID: "elsewhere", Project: "/other", CreatedAt: at(9)})

	got, err := s.LatestSession(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	// The children are newer than root, but --continue resumes roots only.
	if got.ID != root.ID {
		t.Errorf("LatestSession = %s, want %s", got.ID, root.ID)
	}
	kids, err := s.Children(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{k1.ID, k2.ID}, ids(kids)); diff != "" {
		t.Errorf("Children oldest first (-want +got):\n%s", diff)
	}
	none, err := s.Children(ctx, root.ID)
	if err != nil || len(none) != 0 {
		t.Errorf("Children(root) = %v, %v; want none", ids(none), err)
	}
}

func testUpdateSession(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	sess := mustSession(t, s, store.Session{Title: "old", Mode: "ask", Model: "m1", CreatedAt: at(0)})
	title := "new title"
	if err := s.UpdateSession(ctx, sess.ID, store.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Session(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != title || got.Mode != "ask" || got.Model != "m1" {
		t.Errorf("after title update: %+v; want title changed, mode and model kept", got)
	}
	if !got.UpdatedAt.After(sess.UpdatedAt) {
		t.Errorf("UpdatedAt %v not bumped past %v", got.UpdatedAt, sess.UpdatedAt)
	}
	mode, model := "edit", "m2"
	if err := s.UpdateSession(ctx, sess.ID, store.SessionUpdate{Mode: &mode, Model: &model}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Session(ctx, sess.ID)
	if got.Title != title || got.Mode != mode || got.Model != model {
		t.Errorf("after mode/model update: %+v", got)
	}
	wantErr(t, "UpdateSession(missing)", s.UpdateSession(ctx, "missing", store.SessionUpdate{Title: &title}), store.ErrNotFound)
}

// allParts is one message holding every part type.
func allParts(session string) store.Message {
	return store.Message{SessionID: session, Role: llm.RoleAssistant, Model: "gpt-x", Parts: []store.Part{
		store.ReasoningPart{Text: "think first"},
		store.TextPart{Text: "Reading the file. Üñíçødé ✓ \"quotes\" <tags> \x00 nul"},
		store.ToolCallPart{ID: "call_1", Name: "ReadFile", Input: `{"path": "main.go"}`, Finished: true},
		store.ToolCallPart{ID: "call_2", Name: "Grep", Input: `{"pattern": "TODO"`, Finished: false},
		store.FinishPart{Reason: llm.FinishToolCalls, Time: at(3).Add(123456789)},
	}}
}

func testAppendAndRead(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	sess := mustSession(t, s, store.Session{CreatedAt: at(0)})
	m1 := text(sess.ID, llm.RoleUser, "hello")
	m1.CreatedAt = at(1)
	m1.ID = "m1"
	m2 := allParts(sess.ID)
	m2.CreatedAt = at(2)
	m3 := store.Message{SessionID: sess.ID, Role: llm.RoleTool, Parts: []store.Part{
		store.ToolResultPart{ToolCallID: "call_1", Name: "ReadFile", Content: "package main"},
		store.ToolResultPart{ToolCallID: "call_2", Name: "Grep", Content: "bad pattern", IsError: true},
	}}
	var appended []store.Message
	for _, m := range []store.Message{m1, m2, m3} {
		appended = append(appended, mustAppend(t, s, m))
	}
	if diff := cmp.Diff([]int64{1, 2, 3}, seqs(appended)); diff != "" {
		t.Errorf("Seq (-want +got):\n%s", diff)
	}
	if appended[0].ID != "m1" || appended[1].ID == "" || appended[1].ID == appended[2].ID {
		t.Errorf("IDs: %q %q %q; want m1 kept and fresh distinct IDs", appended[0].ID, appended[1].ID, appended[2].ID)
	}
	if !appended[0].CreatedAt.Equal(at(1)) || appended[2].CreatedAt.IsZero() || !appended[0].UpdatedAt.Equal(at(1)) {
		t.Errorf("times: %v %v", appended[0].CreatedAt, appended[2].CreatedAt)
	}
	for i, want := range []store.Message{m1, m2, m3} {
		if diff := cmp.Diff(want.Parts, appended[i].Parts); diff != "" {
			t.Errorf("message %d parts (-want +got):\n%s", i, diff)
		}
	}
	all, err := s.AllMessages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(appended, all); diff != "" {
		t.Errorf("AllMessages (-appended +read):\n%s", diff)
	}
	hist, err := s.Messages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(appended, hist); diff != "" {
		t.Errorf("Messages of a complete history must be as stored (-appended +read):\n%s", diff)
	}
	got, _ := s.Session(ctx, sess.ID)
	if got.MessageCount != 3 {
		t.Errorf("MessageCount = %d, want 3", got.MessageCount)
	}
	if got.UpdatedAt.Before(appended[2].CreatedAt) {
		t.Errorf("session UpdatedAt %v before last message %v", got.UpdatedAt, appended[2].CreatedAt)
	}
	empty := mustSession(t, s, store.Session{})
	none, err := s.Messages(ctx, empty.ID)
	if err != nil || len(none) != 0 {
		t.Errorf("Messages(empty session) = %v, %v; want none, nil", none, err)
	}
}

func testAppendErrors(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	sess := mustSession(t, s, store.Session{})
	mustAppend(t, s, store.Message{ID: "dup", SessionID: sess.ID, Role: llm.RoleUser})
	tests := []struct {
		name string
		m    store.Message
		want error
	}{
		{"missing session", text("nope", llm.RoleUser, "x"), store.ErrNotFound},
		{"bad role", text(sess.ID, "robot", "x"), store.ErrInvalid},
		{"nil part", store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{nil}}, store.ErrInvalid},
		{"duplicate id", store.Message{ID: "dup", SessionID: sess.ID, Role: llm.RoleUser}, store.ErrExists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.AppendMessage(ctx, tc.m)
			wantErr(t, "AppendMessage", err, tc.want)
		})
	}
	all, _ := s.AllMessages(ctx, sess.ID)
	if len(all) != 1 {
		t.Errorf("failed appends left %d messages, want 1", len(all))
	}
	got, _ := s.Session(ctx, sess.ID)
	if got.MessageCount != 1 {
		t.Errorf("failed appends moved MessageCount to %d", got.MessageCount)
	}
	_, err := s.Messages(ctx, "nope")
	wantErr(t, "Messages(missing)", err, store.ErrNotFound)
	_, err = s.AllMessages(ctx, "nope")
	wantErr(t, "AllMessages(missing)", err, store.ErrNotFound)
}

func testUpdateMessage(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	sess := mustSession(t, s, store.Session{})
	m := mustAppend(t, s, store.Message{SessionID: sess.ID, Role: llm.RoleAssistant, CreatedAt: at(1)})
	m.Parts = []store.Part{store.TextPart{Text: "streamed so far"}}
	m.Model = "gpt-x"
	if err := s.UpdateMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	all, _ := s.AllMessages(ctx, sess.ID)
	if len(all) != 1 || all[0].Text() != "streamed so far" || all[0].Model != "gpt-x" || all[0].Seq != 1 {
		t.Errorf("after update: %+v", all)
	}
	if !all[0].UpdatedAt.After(all[0].CreatedAt) {
		t.Errorf("UpdatedAt %v not after CreatedAt %v", all[0].UpdatedAt, all[0].CreatedAt)
	}
	wantErr(t, "UpdateMessage(missing)", s.UpdateMessage(ctx, store.Message{ID: "nope"}), store.ErrNotFound)
	wantErr(t, "UpdateMessage(nil part)", s.UpdateMessage(ctx, store.Message{ID: m.ID, Parts: []store.Part{nil}}), store.ErrInvalid)
}

func testSummaryCutsHistory(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	sess := mustSession(t, s, store.Session{})
	for i := range 5 {
		mustAppend(t, s, text(sess.ID, llm.RoleUser, fmt.Sprint("old ", i)))
	}
	sum, err := s.AppendSummary(ctx, text(sess.ID, llm.RoleAssistant, "summary of 0..4"))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, text(sess.ID, llm.RoleUser, "new question"))
	mustAppend(t, s, text(sess.ID, llm.RoleAssistant, "new answer"))

	got, _ := s.Session(ctx, sess.ID)
	if got.SummaryMessageID != sum.ID {
		t.Errorf("SummaryMessageID = %q, want %q", got.SummaryMessageID, sum.ID)
	}
	hist, err := s.Messages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Seq  int64
		Role llm.Role
		Text string
	}
	var rows []row
	for _, m := range hist {
		rows = append(rows, row{m.Seq, m.Role, m.Text()})
	}
	want := []row{{6, llm.RoleUser, "summary of 0..4"}, {7, llm.RoleUser, "new question"}, {8, llm.RoleAssistant, "new answer"}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Messages after compaction (-want +got):\n%s", diff)
	}
	all, _ := s.AllMessages(ctx, sess.ID)
	if len(all) != 8 || all[5].Role != llm.RoleAssistant {
		t.Errorf("AllMessages: %d messages, summary role %q; want 8 and the stored role assistant", len(all), all[5].Role)
	}
	if _, err := s.AppendSummary(ctx, text("nope", llm.RoleAssistant, "x")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AppendSummary(missing session) = %v, want ErrNotFound", err)
	}
}

// assertValid checks what a model request needs: every assistant tool call
// is answered by the tool messages that directly follow it.
func assertValid(t *testing.T, msgs []store.Message) {
	t.Helper()
	for i, m := range msgs {
		if m.Role != llm.RoleAssistant {
			continue
		}
		answered := map[string]bool{}
		for j := i + 1; j < len(msgs) && msgs[j].Role == llm.RoleTool; j++ {
			for _, r := range msgs[j].ToolResults() {
				answered[r.ToolCallID] = true
			}
		}
		for _, c := range m.ToolCalls() {
			if !answered[c.ID] {
				t.Errorf("message seq %d: tool call %s has no result right after it", m.Seq, c.ID)
			}
		}
	}
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Seq <= msgs[i-1].Seq {
			t.Errorf("seq not increasing: %d after %d", msgs[i].Seq, msgs[i-1].Seq)
		}
	}
}

func cancelled(id, name string) store.ToolResultPart {
	return store.ToolResultPart{ToolCallID: id, Name: name, Content: store.CancelledContent, IsError: true, Cancelled: true}
}

func testRepair(t *testing.T, open Opener) {
	type shape struct {
		Seq   int64
		Role  llm.Role
		Parts []store.Part
	}
	userMsg := func(sid string) store.Message { return text(sid, llm.RoleUser, "hi") }
	two := func(sid string) store.Message {
		return store.Message{SessionID: sid, Role: llm.RoleAssistant, Parts: []store.Part{
			store.ToolCallPart{ID: "a", Name: "ReadFile", Finished: true},
			store.ToolCallPart{ID: "b", Name: "Grep", Finished: true},
		}}
	}
	callA := []store.Part{store.ToolCallPart{ID: "a", Name: "ReadFile", Input: `{"path":"a.go"}`, Finished: true}}
	hi := []store.Part{store.TextPart{Text: "hi"}}
	okA := store.ToolResultPart{ToolCallID: "a", Name: "ReadFile", Content: "ok"}
	tests := []struct {
		name string
		msgs func(sid string) []store.Message
		// summaryAt appends the message at this index with AppendSummary.
		summaryAt int
		want      []shape // what Messages returns
		wantAll   int     // stored message count afterwards
		// loose: the history is left as it is, with a call answered
		// later rather than right after it (the contract repairs only
		// calls with no result at all).
		loose bool
	}{
		{
			name:      "dangling at the end gets a new tool message",
			msgs:      func(sid string) []store.Message { return []store.Message{userMsg(sid), call(sid, "a", "ReadFile")} },
			summaryAt: -1,
			want: []shape{
				{1, llm.RoleUser, hi},
				{2, llm.RoleAssistant, callA},
				{3, llm.RoleTool, []store.Part{cancelled("a", "ReadFile")}},
			},
			wantAll: 3,
		},
		{
			name: "partly answered call joins the existing tool message",
			msgs: func(sid string) []store.Message {
				return []store.Message{userMsg(sid), two(sid), result(sid, "a", "ReadFile")}
			},
			summaryAt: -1,
			want: []shape{
				{1, llm.RoleUser, hi},
				{2, llm.RoleAssistant, two("").Parts},
				{3, llm.RoleTool, []store.Part{okA, cancelled("b", "Grep")}},
			},
			wantAll: 3,
		},
		{
			name: "dangling in the middle is answered in place and later messages shift",
			msgs: func(sid string) []store.Message {
				return []store.Message{userMsg(sid), call(sid, "a", "ReadFile"), userMsg(sid), text(sid, llm.RoleAssistant, "done")}
			},
			summaryAt: -1,
			want: []shape{
				{1, llm.RoleUser, hi},
				{2, llm.RoleAssistant, callA},
				{3, llm.RoleTool, []store.Part{cancelled("a", "ReadFile")}},
				{4, llm.RoleUser, hi},
				{5, llm.RoleAssistant, []store.Part{store.TextPart{Text: "done"}}},
			},
			wantAll: 5,
		},
		{
			name: "a result anywhere after the call counts",
			msgs: func(sid string) []store.Message {
				return []store.Message{call(sid, "a", "ReadFile"), userMsg(sid), result(sid, "a", "ReadFile")}
			},
			summaryAt: -1,
			want: []shape{
				{1, llm.RoleAssistant, callA},
				{2, llm.RoleUser, hi},
				{3, llm.RoleTool, []store.Part{okA}},
			},
			wantAll: 3,
			loose:   true,
		},
		{
			name: "calls before the summary are not history any more",
			msgs: func(sid string) []store.Message {
				return []store.Message{call(sid, "a", "ReadFile"), text(sid, llm.RoleAssistant, "summary"), userMsg(sid)}
			},
			summaryAt: 1,
			want: []shape{
				{2, llm.RoleUser, []store.Part{store.TextPart{Text: "summary"}}},
				{3, llm.RoleUser, hi},
			},
			wantAll: 3,
		},
		{
			name: "two dangling turns are both repaired",
			msgs: func(sid string) []store.Message {
				return []store.Message{call(sid, "a", "ReadFile"), userMsg(sid), call(sid, "c", "LS")}
			},
			summaryAt: -1,
			want: []shape{
				{1, llm.RoleAssistant, callA},
				{2, llm.RoleTool, []store.Part{cancelled("a", "ReadFile")}},
				{3, llm.RoleUser, hi},
				{4, llm.RoleAssistant, []store.Part{store.ToolCallPart{ID: "c", Name: "LS", Input: `{"path":"a.go"}`, Finished: true}}},
				{5, llm.RoleTool, []store.Part{cancelled("c", "LS")}},
			},
			wantAll: 5,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			ctx := t.Context()
			sess := mustSession(t, s, store.Session{})
			for i, m := range tc.msgs(sess.ID) {
				var err error
				if i == tc.summaryAt {
					_, err = s.AppendSummary(ctx, m)
				} else {
					_, err = s.AppendMessage(ctx, m)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			first, err := s.Messages(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got []shape
			for _, m := range first {
				got = append(got, shape{m.Seq, m.Role, m.Parts})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Messages (-want +got):\n%s", diff)
			}
			if !tc.loose {
				assertValid(t, first)
			}
			// The repair is stored: a second read (or another process)
			// sees the same history and nothing is added twice.
			second, err := s.Messages(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(first, second); diff != "" {
				t.Errorf("second Messages differs (-first +second):\n%s", diff)
			}
			all, _ := s.AllMessages(ctx, sess.ID)
			sess, _ = s.Session(ctx, sess.ID)
			if len(all) != tc.wantAll || sess.MessageCount != int64(tc.wantAll) {
				t.Errorf("stored %d messages, MessageCount %d; want %d", len(all), sess.MessageCount, tc.wantAll)
			}
			// New appends continue after the repaired history.
			next := mustAppend(t, s, userMsg(sess.ID))
			if next.Seq != all[len(all)-1].Seq+1 {
				t.Errorf("next append got seq %d, want %d", next.Seq, all[len(all)-1].Seq+1)
			}
		})
	}
}

func testConcurrentAppends(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	sess := mustSession(t, s, store.Session{})
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.AppendMessage(ctx, text(sess.ID, llm.RoleUser, fmt.Sprintf("w%d-%03d", w, i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := s.AllMessages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != workers*each {
		t.Fatalf("%d messages stored, want %d", len(all), workers*each)
	}
	last := map[string]string{}
	for i, m := range all {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d: sequence numbers must be unique and gap-free", i, m.Seq)
		}
		w, _, _ := strings.Cut(m.Text(), "-")
		if prev, ok := last[w]; ok && m.Text() <= prev {
			t.Errorf("worker %s: %q stored after %q", w, m.Text(), prev)
		}
		last[w] = m.Text()
	}
	got, _ := s.Session(ctx, sess.ID)
	if got.MessageCount != workers*each {
		t.Errorf("MessageCount = %d, want %d", got.MessageCount, workers*each)
	}
}

func testToolHistory(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	sess := mustSession(t, s, store.Session{})
	huge := strings.Repeat("x", store.MaxToolOutput*2)
	recs := []store.ToolRecord{
		{SessionID: sess.ID, MessageID: "m1", CallID: "c1", Name: "Write", Agent: "code", Input: `{"path":"a.go"}`,
			Output: "wrote a.go", Files: []string{"/p/a.go", "/p/b.go"}, Elapsed: 1500 * time.Millisecond, At: at(1)},
		{SessionID: sess.ID, CallID: "c2", Name: "Bash", Agent: store.AgentOrchestrator, Output: huge, IsError: true, At: at(2)},
	}
	for _, r := range recs {
		if err := s.RecordTool(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ToolHistory(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("ToolHistory: %d records, want 2", len(got))
	}
	if diff := cmp.Diff(recs[0], got[0]); diff != "" {
		t.Errorf("record 1 (-want +got):\n%s", diff)
	}
	out := got[1].Output
	if len(out) > store.MaxToolOutput || len(out) < store.MaxToolOutput/2 || !strings.Contains(out, "truncated") {
		t.Errorf("capped output: %d bytes (cap %d), marker present %v", len(out), store.MaxToolOutput, strings.Contains(out, "truncated"))
	}
	if got[1].Files != nil || !got[1].IsError || got[1].Name != "Bash" {
		t.Errorf("record 2 = %+v", got[1])
	}
	wantErr(t, "RecordTool(missing session)", s.RecordTool(ctx, store.ToolRecord{SessionID: "nope", CallID: "x", Name: "LS"}), store.ErrNotFound)
}

func testTodos(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	sess := mustSession(t, s, store.Session{})
	other := mustSession(t, s, store.Session{})
	first := []store.Todo{{ID: "1", Content: "read", Status: "completed"}, {ID: "2", Content: "write", Status: "in_progress"}, {ID: "3", Content: "test", Status: "pending"}}
	second := []store.Todo{{ID: "9", Content: "review", Status: "pending"}, {ID: "1", Content: "read", Status: "completed"}}
	steps := []struct {
		set  []store.Todo
		want []store.Todo
	}{
		{first, first},
		{second, second},
		{nil, []store.Todo{}},
	}
	if err := s.SetTodos(ctx, other.ID, first); err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		if err := s.SetTodos(ctx, sess.ID, st.set); err != nil {
			t.Fatal(err)
		}
		got, err := s.Todos(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(st.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step %d Todos (-want +got):\n%s", i, diff)
		}
	}
	got, _ := s.Todos(ctx, other.ID)
	if diff := cmp.Diff(first, got); diff != "" {
		t.Errorf("another session's todos changed (-want +got):\n%s", diff)
	}
	wantErr(t, "SetTodos(missing)", s.SetTodos(ctx, "nope", first), store.ErrNotFound)
}

func testUsageTotals(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	root := mustSession(t, s, store.Session{})
	kid := mustSession(t, s, store.Session{ParentID: root.ID, Agent: "search"})
	if err := s.AddUsage(ctx, store.UsageRecord{SessionID: root.ID, Agent: store.AgentOrchestrator, Model: "big",
		PromptTokens: 1000, CompletionTokens: 200, CachedTokens: 400, ReasoningTokens: 50, Cost: 0.5, At: at(1)}); err != nil {
		t.Fatal(err)
	}
	// Concurrent adds to the child: the totals must not lose any.
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := s.AddUsage(ctx, store.UsageRecord{SessionID: kid.ID, Agent: "search", Model: "small",
				PromptTokens: 10, CompletionTokens: 2, CachedTokens: 1, Cost: 0.25, At: at(2)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	gotRoot, _ := s.Session(ctx, root.ID)
	gotKid, _ := s.Session(ctx, kid.ID)
	type totals struct {
		P, C, K int64
		Cost    float64
	}
	if diff := cmp.Diff(totals{10 * n, 2 * n, n, 0.25 * n}, totals{gotKid.PromptTokens, gotKid.CompletionTokens, gotKid.CachedTokens, gotKid.Cost}); diff != "" {
		t.Errorf("child totals (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(totals{1000 + 10*n, 200 + 2*n, 400 + n, 0.5 + 0.25*n}, totals{gotRoot.PromptTokens, gotRoot.CompletionTokens, gotRoot.CachedTokens, gotRoot.Cost}); diff != "" {
		t.Errorf("root totals include the child's (-want +got):\n%s", diff)
	}
	recs, err := s.UsageRecords(ctx, root.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.UsageRecord{{SessionID: root.ID, Project: project, Agent: store.AgentOrchestrator, Model: "big",
		PromptTokens: 1000, CompletionTokens: 200, CachedTokens: 400, ReasoningTokens: 50, Cost: 0.5, At: at(1)}}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("UsageRecords (-want +got):\n%s", diff)
	}
	kidRecs, _ := s.UsageRecords(ctx, kid.ID)
	if len(kidRecs) != n {
		t.Errorf("child has %d usage records, want %d", len(kidRecs), n)
	}
	wantErr(t, "AddUsage(missing)", s.AddUsage(ctx, store.UsageRecord{SessionID: "nope"}), store.ErrNotFound)
}

func testStats(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	p1 := mustSession(t, s, store.Session{})
	p2 := mustSession(t, s, store.Session{Project: "/other"})
	day1 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	day1Late := time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC) // March 2 in UTC+10
	day2 := time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC)
	add := []store.UsageRecord{
		{SessionID: p1.ID, Agent: "orchestrator", Model: "big", PromptTokens: 100, CompletionTokens: 10, Cost: 1, At: day1},
		{SessionID: p1.ID, Agent: "code", Model: "big", PromptTokens: 200, CompletionTokens: 20, CachedTokens: 5, Cost: 2, At: day1Late},
		{SessionID: p1.ID, Agent: "search", Model: "small", PromptTokens: 50, CompletionTokens: 5, ReasoningTokens: 7, Cost: 0.5, At: day2},
		{SessionID: p2.ID, Agent: "code", Model: "small", PromptTokens: 1, CompletionTokens: 1, Cost: 4, At: day2},
	}
	for _, u := range add {
		if err := s.AddUsage(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	plus10 := time.FixedZone("UTC+10", 10*3600)
	tests := []struct {
		name string
		q    store.StatsQuery
		want []store.StatsRow
	}{
		{"by day UTC", store.StatsQuery{Project: project, GroupBy: store.GroupByDay, Location: time.UTC}, []store.StatsRow{
			{Key: "2025-03-01", Calls: 2, PromptTokens: 300, CompletionTokens: 30, CachedTokens: 5, Cost: 3},
			{Key: "2025-03-02", Calls: 1, PromptTokens: 50, CompletionTokens: 5, ReasoningTokens: 7, Cost: 0.5},
		}},
		{"by day in UTC+10", store.StatsQuery{Project: project, GroupBy: store.GroupByDay, Location: plus10}, []store.StatsRow{
			{Key: "2025-03-01", Calls: 1, PromptTokens: 100, CompletionTokens: 10, Cost: 1},
			{Key: "2025-03-02", Calls: 2, PromptTokens: 250, CompletionTokens: 25, CachedTokens: 5, ReasoningTokens: 7, Cost: 2.5},
		}},
		{"by model, costliest first", store.StatsQuery{Project: project, GroupBy: store.GroupByModel}, []store.StatsRow{
			{Key: "big", Calls: 2, PromptTokens: 300, CompletionTokens: 30, CachedTokens: 5, Cost: 3},
			{Key: "small", Calls: 1, PromptTokens: 50, CompletionTokens: 5, ReasoningTokens: 7, Cost: 0.5},
		}},
		{"by agent across projects", store.StatsQuery{GroupBy: store.GroupByAgent}, []store.StatsRow{
			{Key: "code", Calls: 2, PromptTokens: 201, CompletionTokens: 21, CachedTokens: 5, Cost: 6},
			{Key: "orchestrator", Calls: 1, PromptTokens: 100, CompletionTokens: 10, Cost: 1},
			{Key: "search", Calls: 1, PromptTokens: 50, CompletionTokens: 5, ReasoningTokens: 7, Cost: 0.5},
		}},
		{"since", store.StatsQuery{Project: project, GroupBy: store.GroupByAgent, Since: day1Late}, []store.StatsRow{
			{Key: "code", Calls: 1, PromptTokens: 200, CompletionTokens: 20, CachedTokens: 5, Cost: 2},
			{Key: "search", Calls: 1, PromptTokens: 50, CompletionTokens: 5, ReasoningTokens: 7, Cost: 0.5},
		}},
		{"nothing matches", store.StatsQuery{Project: "/nowhere", GroupBy: store.GroupByDay}, []store.StatsRow{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Stats(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Stats (-want +got):\n%s", diff)
			}
		})
	}
	_, err := s.Stats(ctx, store.StatsQuery{GroupBy: "week"})
	wantErr(t, "Stats(week)", err, store.ErrInvalid)
}

func testDeleteCascades(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	root := mustSession(t, s, store.Session{})
	kid := mustSession(t, s, store.Session{ParentID: root.ID, Agent: "code"})
	keep := mustSession(t, s, store.Session{})
	for _, id := range []string{root.ID, kid.ID, keep.ID} {
		mustAppend(t, s, text(id, llm.RoleUser, "hi"))
		if err := s.RecordTool(ctx, store.ToolRecord{SessionID: id, CallID: "c", Name: "LS"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetTodos(ctx, id, []store.Todo{{ID: "1", Content: "x", Status: "pending"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddUsage(ctx, store.UsageRecord{SessionID: id, Agent: "a", Model: "m", PromptTokens: 10, Cost: 1}); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := s.CreateCheckpoint(ctx, store.Checkpoint{SessionID: kid.ID, Project: project})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx, root.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{root.ID, kid.ID} {
		_, err := s.Session(ctx, id)
		wantErr(t, "Session after delete", err, store.ErrNotFound)
		_, err = s.AllMessages(ctx, id)
		wantErr(t, "AllMessages after delete", err, store.ErrNotFound)
		if h, _ := s.ToolHistory(ctx, id); len(h) != 0 {
			t.Errorf("tool history of deleted %s survived: %v", id, h)
		}
		if td, _ := s.Todos(ctx, id); len(td) != 0 {
			t.Errorf("todos of deleted %s survived: %v", id, td)
		}
	}
	_, err = s.Checkpoint(ctx, cp.ID)
	wantErr(t, "Checkpoint of deleted session", err, store.ErrNotFound)
	// The untouched session keeps everything.
	if all, _ := s.AllMessages(ctx, keep.ID); len(all) != 1 {
		t.Errorf("other session lost messages: %d", len(all))
	}
	if td, _ := s.Todos(ctx, keep.ID); len(td) != 1 {
		t.Errorf("other session lost todos")
	}
	// Usage outlives sessions: the money was spent.
	rows, err := s.Stats(ctx, store.StatsQuery{Project: project, GroupBy: store.GroupByModel})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Calls != 3 || rows[0].Cost != 3 {
		t.Errorf("Stats after delete = %+v, want 3 calls costing 3", rows)
	}
	wantErr(t, "DeleteSession(missing)", s.DeleteSession(ctx, root.ID), store.ErrNotFound)
}

func testCheckpoints(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	sess := mustSession(t, s, store.Session{})
	_, err := s.LatestUnrestored(ctx, project)
	wantErr(t, "LatestUnrestored(empty)", err, store.ErrNotFound)

	var cps []store.Checkpoint
	for i, label := range []string{"first", "second", "third"} {
		cp, err := s.CreateCheckpoint(ctx, store.Checkpoint{SessionID: sess.ID, Project: project, Label: label, CreatedAt: at(i)})
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, cp)
	}
	if _, err := s.CreateCheckpoint(ctx, store.Checkpoint{Project: "/other", Label: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	list, err := s.Checkpoints(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range list {
		labels = append(labels, c.Label)
	}
	if diff := cmp.Diff([]string{"third", "second", "first"}, labels); diff != "" {
		t.Errorf("Checkpoints newest first (-want +got):\n%s", diff)
	}

	cp := cps[2]
	before := store.FileSnapshot{Path: "/home/dev/proj/a.go", Existed: true, Mode: 0o644, Content: []byte("package a\n")}
	later := store.FileSnapshot{Path: before.Path, Existed: true, Mode: 0o600, Content: []byte("changed by the first edit\n")}
	created := store.FileSnapshot{Path: "/home/dev/proj/new.go", Existed: false, Content: []byte{}}
	emptyFile := store.FileSnapshot{Path: "/home/dev/proj/empty", Existed: true, Mode: 0o755, Content: []byte{}}
	steps := []struct {
		snap      store.FileSnapshot
		wantAdded bool
	}{{before, true}, {later, false}, {created, true}, {emptyFile, true}}
	for i, st := range steps {
		added, err := s.AddSnapshot(ctx, cp.ID, st.snap)
		if err != nil {
			t.Fatal(err)
		}
		if added != st.wantAdded {
			t.Errorf("AddSnapshot step %d added = %v, want %v", i, added, st.wantAdded)
		}
	}
	if err := s.SetAfterHashes(ctx, cp.ID, map[string]string{before.Path: "h-a", created.Path: "h-new"}); err != nil {
		t.Fatal(err)
	}
	// An unknown path fails the whole call: h-x must not land on a.go.
	err = s.SetAfterHashes(ctx, cp.ID, map[string]string{before.Path: "h-x", "/home/dev/proj/never": "h"})
	wantErr(t, "SetAfterHashes(unknown path)", err, store.ErrNotFound)
	snaps, err := s.Snapshots(ctx, cp.ID)
	if err != nil {
		t.Fatal(err)
	}
	before.HashAfter, created.HashAfter = "h-a", "h-new"
	if diff := cmp.Diff([]store.FileSnapshot{before, emptyFile, created}, snaps); diff != "" {
		t.Errorf("Snapshots: first snapshot wins, ordered by path (-want +got):\n%s", diff)
	}
	got, err := s.Checkpoint(ctx, cp.ID)
	if err != nil || got.Files != 3 || got.Label != "third" || got.SessionID != sess.ID {
		t.Errorf("Checkpoint = %+v, %v; want 3 files", got, err)
	}

	latest, err := s.LatestUnrestored(ctx, project)
	if err != nil || latest.ID != cps[2].ID {
		t.Fatalf("LatestUnrestored = %v, %v; want %s", latest.ID, err, cps[2].ID)
	}
	if err := s.MarkRestored(ctx, cps[2].ID, at(10)); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Checkpoint(ctx, cps[2].ID)
	if !got.RestoredAt.Equal(at(10)) {
		t.Errorf("RestoredAt = %v, want %v", got.RestoredAt, at(10))
	}
	// cps[1] holds no file (its first snapshot failed): undo skips it
	// rather than consume it and restore nothing.
	if _, err := s.AddSnapshot(ctx, cps[0].ID, store.FileSnapshot{Path: "/home/dev/proj/b.go", Existed: true, Content: []byte("b")}); err != nil {
		t.Fatal(err)
	}
	latest, err = s.LatestUnrestored(ctx, project)
	if err != nil || latest.ID != cps[0].ID {
		t.Errorf("after restoring the newest, LatestUnrestored = %v, %v; want %s (skipping the empty %s)", latest.ID, err, cps[0].ID, cps[1].ID)
	}
	for _, c := range cps[:2] {
		if err := s.MarkRestored(ctx, c.ID, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = s.LatestUnrestored(ctx, project)
	wantErr(t, "LatestUnrestored(all restored)", err, store.ErrNotFound)

	errTests := []struct {
		name string
		err  error
		want error
	}{
		{"create with relative project", func() error { _, e := s.CreateCheckpoint(ctx, store.Checkpoint{Project: "rel"}); return e }(), store.ErrInvalid},
		{"create for missing session", func() error {
			_, e := s.CreateCheckpoint(ctx, store.Checkpoint{Project: project, SessionID: "nope"})
			return e
		}(), store.ErrNotFound},
		{"snapshot relative path", func() error { _, e := s.AddSnapshot(ctx, cp.ID, store.FileSnapshot{Path: "a.go"}); return e }(), store.ErrInvalid},
		{"snapshot missing checkpoint", func() error { _, e := s.AddSnapshot(ctx, "nope", store.FileSnapshot{Path: "/a"}); return e }(), store.ErrNotFound},
		{"hashes missing checkpoint", s.SetAfterHashes(ctx, "nope", nil), store.ErrNotFound},
		{"snapshots missing checkpoint", func() error { _, e := s.Snapshots(ctx, "nope"); return e }(), store.ErrNotFound},
		{"restore missing", s.MarkRestored(ctx, "nope", time.Time{}), store.ErrNotFound},
		{"get missing", func() error { _, e := s.Checkpoint(ctx, "nope"); return e }(), store.ErrNotFound},
	}
	for _, tc := range errTests {
		wantErr(t, tc.name, tc.err, tc.want)
	}
}

func testCache(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	if v, _, ok, err := s.CacheGet(ctx, "https://a"); ok || err != nil || v != nil {
		t.Errorf("CacheGet(missing) = %q, %v, %v; want nothing", v, ok, err)
	}
	puts := []struct {
		key   string
		value []byte
		at    time.Time
	}{
		{"https://a", []byte("old page"), at(1)},
		{"https://b", []byte("page b"), at(2)},
		{"https://empty", []byte{}, at(3)},
		{"https://a", []byte("new page"), at(5)}, // replaces the first
	}
	for _, p := range puts {
		if err := s.CachePut(ctx, p.key, p.value, p.at); err != nil {
			t.Fatal(err)
		}
	}
	type entry struct {
		Value []byte
		At    time.Time
		OK    bool
	}
	get := func(key string) entry {
		v, when, ok, err := s.CacheGet(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return entry{v, when, ok}
	}
	if diff := cmp.Diff(entry{[]byte("new page"), at(5), true}, get("https://a")); diff != "" {
		t.Errorf("CacheGet(a) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(entry{[]byte{}, at(3), true}, get("https://empty")); diff != "" {
		t.Errorf("CacheGet(empty) (-want +got):\n%s", diff)
	}
	n, err := s.CachePrune(ctx, at(3))
	if err != nil || n != 1 {
		t.Errorf("CachePrune(at 3) = %d, %v; want 1 (only b is older)", n, err)
	}
	if get("https://b").OK {
		t.Error("b survived pruning")
	}
	if !get("https://empty").OK || !get("https://a").OK {
		t.Error("pruning removed entries not older than the cut")
	}
}

// richSession builds a session with every kind of record, a compaction and
// a child session; it returns the root ID.
func richSession(t *testing.T, s store.Store) string {
	t.Helper()
	ctx := t.Context()
	root := mustSession(t, s, store.Session{Title: "refactor the parser", Agent: store.AgentOrchestrator, Mode: "edit", Model: "big", CreatedAt: at(0)})
	add := func(m store.Message, minute int) store.Message {
		m.CreatedAt = at(minute)
		return mustAppend(t, s, m)
	}
	add(text(root.ID, llm.RoleUser, "please refactor parse.go\n```go\nfunc x() {}\n```"), 1)
	asst := allParts(root.ID)
	add(asst, 2)
	add(store.Message{SessionID: root.ID, Role: llm.RoleTool, Parts: []store.Part{
		store.ToolResultPart{ToolCallID: "call_1", Name: "ReadFile", Content: "````\nfour backticks\n````"},
		store.ToolResultPart{ToolCallID: "call_2", Name: "Grep", Content: "bad pattern", IsError: true},
	}}, 3)
	sum := text(root.ID, llm.RoleAssistant, "Summary: the user wants parse.go refactored.")
	sum.CreatedAt = at(4)
	if _, err := s.AppendSummary(ctx, sum); err != nil {
		t.Fatal(err)
	}
	add(call(root.ID, "call_3", "Agent"), 5)
	kid := mustSession(t, s, store.Session{ParentID: root.ID, Title: "search for parse callers", Agent: "search", Model: "small", CreatedAt: at(5)})
	add(text(kid.ID, llm.RoleUser, "find callers of Parse"), 6)
	add(text(kid.ID, llm.RoleAssistant, "cmd/main.go:12"), 7)
	add(result(root.ID, "call_3", "Agent"), 8)
	for _, r := range []store.ToolRecord{
		{SessionID: root.ID, MessageID: "m", CallID: "call_1", Name: "ReadFile", Agent: store.AgentOrchestrator, Input: `{"path":"parse.go"}`, Output: "package p", Elapsed: time.Second, At: at(3)},
		{SessionID: kid.ID, CallID: "k1", Name: "Grep", Agent: "search", Output: "cmd/main.go:12", Files: []string{"/home/dev/proj/cmd/main.go"}, At: at(6)},
	} {
		if err := s.RecordTool(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetTodos(ctx, root.ID, []store.Todo{{ID: "1", Content: "refactor", Status: "in_progress"}, {ID: "2", Content: "test", Status: "pending"}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []store.UsageRecord{
		{SessionID: root.ID, Agent: store.AgentOrchestrator, Model: "big", PromptTokens: 1200, CompletionTokens: 300, CachedTokens: 100, ReasoningTokens: 20, Cost: 0.0125, At: at(2)},
		{SessionID: kid.ID, Agent: "search", Model: "small", PromptTokens: 400, CompletionTokens: 50, Cost: 0.001, At: at(7)},
	} {
		if err := s.AddUsage(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	return root.ID
}

func testRoundTrip(t *testing.T, open Opener) {
	src := open(t)
	ctx := t.Context()
	rootID := richSession(t, src)
	// An unrelated session must not leak into the export.
	mustAppend(t, src, text(mustSession(t, src, store.Session{}).ID, llm.RoleUser, "unrelated"))

	var first bytes.Buffer
	if err := store.ExportJSONL(ctx, src, &first, rootID); err != nil {
		t.Fatal(err)
	}
	dst := open(t)
	ids, err := store.ImportJSONL(ctx, dst, bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || ids[0] != rootID {
		t.Errorf("ImportJSONL ids = %v, want the root then its child", ids)
	}
	var second bytes.Buffer
	if err := store.ExportJSONL(ctx, dst, &second, rootID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.String(), second.String()); diff != "" {
		t.Errorf("export → import → export differs (-first +second):\n%s", diff)
	}
	wantArch, err := store.Export(ctx, src, rootID)
	if err != nil {
		t.Fatal(err)
	}
	gotArch, err := store.Export(ctx, dst, rootID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantArch, gotArch); diff != "" {
		t.Errorf("archives differ after import (-src +dst):\n%s", diff)
	}
	// The imported session behaves like the original: same history.
	wantHist, _ := src.Messages(ctx, rootID)
	gotHist, err := dst.Messages(ctx, rootID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantHist, gotHist); diff != "" {
		t.Errorf("Messages after import (-src +dst):\n%s", diff)
	}
	if lines := strings.Count(first.String(), "\n"); lines < 15 {
		t.Errorf("export has only %d lines:\n%s", lines, first.String())
	}

	// Importing again conflicts and changes nothing.
	_, err = store.ImportJSONL(ctx, dst, bytes.NewReader(first.Bytes()))
	wantErr(t, "second import", err, store.ErrExists)
	var third bytes.Buffer
	if err := store.ExportJSONL(ctx, dst, &third, rootID); err != nil {
		t.Fatal(err)
	}
	if third.String() != first.String() {
		t.Error("a failed import changed the stored session")
	}
}

func testImportErrors(t *testing.T, open Opener) {
	src := open(t)
	ctx := t.Context()
	rootID := richSession(t, src)
	var good bytes.Buffer
	if err := store.ExportJSONL(ctx, src, &good, rootID); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(good.String(), "\n")
	tests := []struct {
		name  string
		input string
		want  string // in the error text
	}{
		{"empty", "", "header"},
		{"no header", strings.Join(lines[1:], ""), "line 1"},
		{"future version", strings.Replace(good.String(), `"version":1`, `"version":99`, 1), "version 99"},
		{"garbage line", lines[0] + lines[1] + "{not json\n", "line 3"},
		{"message before its session", lines[0] + lines[2], "before its session line"},
		{"unknown record", lines[0] + `{"type":"hologram"}` + "\n", "hologram"},
		{"cut in the middle", strings.Join(lines[:len(lines)/2], "") + lines[len(lines)/2][:10], "line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := open(t)
			_, err := store.ImportJSONL(ctx, dst, strings.NewReader(tc.input))
			if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ImportJSONL error = %v; want ErrInvalid mentioning %q", err, tc.want)
			}
			if got, _ := dst.Sessions(ctx, store.SessionQuery{Children: true}); len(got) != 0 {
				t.Errorf("a failed import stored %d sessions", len(got))
			}
		})
	}
}

func testExportMarkdown(t *testing.T, open Opener) {
	s := open(t)
	ctx := t.Context()
	rootID := richSession(t, s)
	var buf bytes.Buffer
	if err := store.ExportMarkdown(ctx, s, &buf, rootID); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"# refactor the parser\n",
		"- Project: `/home/dev/proj`",
		"## User",
		"please refactor parse.go",
		"<details><summary>Reasoning</summary>",
		"**Tool call** `ReadFile` (`call_1`)",
		"**Result of** `Grep` (`call_2`) — error",
		"## Summary of the earlier conversation",
		"# Sub-agent search: search for parse callers",
		"- [ ] test (pending)",
		"`````\n````\nfour backticks\n````\n`````", // a fence longer than the content's
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "Sub-agent") < strings.Index(md, "please refactor") {
		t.Error("the child session must follow its parent")
	}
	err := store.ExportMarkdown(ctx, s, &buf, "nope")
	wantErr(t, "ExportMarkdown(missing)", err, store.ErrNotFound)
}

func testCancelledContext(t *testing.T, open Opener) {
	s := open(t)
	sess := mustSession(t, s, store.Session{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.AppendMessage(ctx, text(sess.ID, llm.RoleUser, "late")); err == nil {
		t.Error("AppendMessage with a cancelled context succeeded")
	}
	if _, err := s.Messages(ctx, sess.ID); err == nil {
		t.Error("Messages with a cancelled context succeeded")
	}
	all, err := s.AllMessages(t.Context(), sess.ID)
	if err != nil || len(all) != 0 {
		t.Errorf("after a cancelled append: %d messages, %v; want none", len(all), err)
	}
}

package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
)

var words = strings.Fields(`the parser returns an error when the input file is empty so we check
	"len(data) == 0" first and then walk the AST; each node's position is recorded in a map keyed
	by offset. Tests cover nested blocks, unicode identifiers like ünïcødé, tabs	and newlines`)

// prose returns about n bytes of text with the quotes, tabs and newlines
// real replies carry (they cost escaping in JSON).
func prose(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(12) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// conversation builds n messages in turns of four: the user's request
// (~500 B), an assistant reply with reasoning, text and a tool call, the
// tool's result (~1.5 KB, a file excerpt) and a closing answer (~500 B).
func conversation(sessionID string, n int) []store.Message {
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	msgs := make([]store.Message, 0, n)
	for i := 0; len(msgs) < n; i++ {
		callID := fmt.Sprintf("call_%06d", i)
		turn := []store.Message{
			{Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: prose(r, 500)}}},
			{Role: llm.RoleAssistant, Model: "gpt-main", Parts: []store.Part{
				store.ReasoningPart{Text: prose(r, 300)},
				store.TextPart{Text: prose(r, 500)},
				store.ToolCallPart{ID: callID, Name: "ReadFile", Input: fmt.Sprintf(`{"path":"internal/pkg%d/file%d.go","offset":%d,"limit":200}`, i%7, i, i*10), Finished: true},
				store.FinishPart{Reason: llm.FinishToolCalls, Time: start.Add(time.Duration(i) * time.Second)},
			}},
			{Role: llm.RoleTool, Parts: []store.Part{store.ToolResultPart{ToolCallID: callID, Name: "ReadFile", Content: prose(r, 1500)}}},
			{Role: llm.RoleAssistant, Model: "gpt-main", Parts: []store.Part{
				store.TextPart{Text: prose(r, 500)},
				store.FinishPart{Reason: llm.FinishStop, Time: start.Add(time.Duration(i)*time.Second + 500*time.Millisecond)},
			}},
		}
		for _, m := range turn {
			if len(msgs) == n {
				break
			}
			m.ID = fmt.Sprintf("msg_%06d", len(msgs)+1)
			m.SessionID = sessionID
			m.Seq = int64(len(msgs) + 1)
			m.CreatedAt = start.Add(time.Duration(len(msgs)) * time.Second)
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// cpuTime is the CPU time this process has used (all threads, user and
// system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-ms/op metric. On a shared machine wall time
// (ns/op) swings with other processes' load; CPU time much less.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// seedDB writes a database holding one session of n messages and returns
// its path and the session ID.
func seedDB(b *testing.B, n int) (string, string) {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "odin.db")
	s, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const id = "bench-session"
	msgs := conversation(id, n)
	err = s.Import(ctx, []store.SessionArchive{{
		Session:  store.Session{ID: id, Project: "/home/dev/proj", Agent: store.AgentOrchestrator, CreatedAt: msgs[0].CreatedAt},
		Messages: msgs,
	}})
	if err != nil {
		b.Fatal(err)
	}
	return path, id
}

// BenchmarkResume10k is `odin run --continue` on a long session: open the
// database and load a 10,000-message history with Messages.
func BenchmarkResume10k(b *testing.B) {
	path, id := seedDB(b, 10_000)
	ctx := context.Background()
	b.ResetTimer()
	start := cpuTime(b)
	for b.Loop() {
		s, err := store.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		msgs, err := s.Messages(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		if len(msgs) != 10_000 {
			b.Fatalf("loaded %d messages", len(msgs))
		}
		s.Close()
	}
	reportCPU(b, start)
}

// BenchmarkMessages10k is the load alone, on an open store.
func BenchmarkMessages10k(b *testing.B) {
	path, id := seedDB(b, 10_000)
	ctx := context.Background()
	s, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	start := cpuTime(b)
	for b.Loop() {
		if _, err := s.Messages(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkAppendMessage is one committed append of an assistant reply
// (~1.3 KB of parts), the write done for every message of a turn.
func BenchmarkAppendMessage(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(b.TempDir(), "odin.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sess, err := s.CreateSession(ctx, store.Session{Project: "/home/dev/proj"})
	if err != nil {
		b.Fatal(err)
	}
	m := conversation(sess.ID, 2)[1]
	m.ID, m.Seq, m.CreatedAt = "", 0, time.Time{}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.AppendMessage(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFencedAppendMessage is BenchmarkAppendMessage through a claim,
// as every session writes now: the epoch check's share on SQLite.
func BenchmarkFencedAppendMessage(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(b.TempDir(), "odin.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sess, err := s.CreateSession(ctx, store.Session{Project: "/home/dev/proj"})
	if err != nil {
		b.Fatal(err)
	}
	h, err := s.Claim(ctx, sess.ID, "bench")
	if err != nil {
		b.Fatal(err)
	}
	m := conversation(sess.ID, 2)[1]
	m.ID, m.Seq, m.CreatedAt = "", 0, time.Time{}
	b.ResetTimer()
	for b.Loop() {
		if _, err := h.AppendMessage(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}

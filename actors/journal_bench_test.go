package actors

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
)

// BenchmarkJournalsManySessions is odin serve's write load: 300 sessions,
// each journal queuing a turn's writes (the input, a reply with a call,
// its result, the answer, usage) and waiting on its barrier, all at once,
// on one SQLite store — each journal committing alone, or grouped
// (store.Grouped, what serve and acp use). An op is one round of 300
// turns; cpu-ms/op is the process's CPU time for it, steadier than ns/op
// on a shared machine.
func BenchmarkJournalsManySessions(b *testing.B) {
	for _, grouped := range []bool{false, true} {
		b.Run(fmt.Sprintf("grouped=%v", grouped), func(b *testing.B) {
			s, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "odin.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var st store.Store = s
			if grouped {
				st = store.NewGrouped(s)
			}
			const sessions = 300
			js := make([]*journal, sessions)
			ids := make([]string, sessions)
			for i := range js {
				ids[i] = fmt.Sprintf("s%d", i)
				if _, err := st.CreateSession(context.Background(), store.Session{ID: ids[i], Project: "/p", Agent: "orchestrator"}); err != nil {
					b.Fatal(err)
				}
				js[i] = newJournal(st, zerolog.Nop())
			}
			defer func() {
				for _, j := range js {
					j.close()
				}
			}()
			call := llm.ToolCall{ID: "c1", Name: "ReadFile", Arguments: `{"file_path":"/p/a.go"}`}
			now := time.Now()
			b.ResetTimer()
			cpu := processCPU()
			for b.Loop() {
				var wg sync.WaitGroup
				for i, j := range js {
					wg.Add(1)
					go func() {
						defer wg.Done()
						j.appendMessage(ids[i], llm.Message{Role: llm.RoleUser, Content: "what is in a.go?"}, "", "", now)
						j.appendMessage(ids[i], llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}}, "m", llm.FinishToolCalls, now)
						j.appendResult(ids[i], toolResult{msg: llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Name: "ReadFile", Content: "package a\n"}}, now)
						j.appendMessage(ids[i], llm.Message{Role: llm.RoleAssistant, Content: "It is package a."}, "m", llm.FinishStop, now)
						if err := <-j.barrier(); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

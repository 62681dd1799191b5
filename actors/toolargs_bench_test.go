package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

// bigArgServer is a model that answers the first request with one
// WriteFile call whose content is size bytes, streamed in 64 KiB argument
// fragments, and every later request with a short text. It keeps nothing
// of what it is sent, so the heap measured in the process is Odin's.
func bigArgServer(tb testing.TB, path string, size int) *httptest.Server {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(delta any, finish string) {
			ch := map[string]any{"model": "m", "choices": []any{map[string]any{"index": 0, "delta": delta}}}
			if finish != "" {
				ch["choices"].([]any)[0].(map[string]any)["finish_reason"] = finish
			}
			b, _ := json.Marshal(ch)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		if calls.Add(1) > 1 {
			send(map[string]any{"content": "done"}, "stop")
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		fn := func(args string) map[string]any {
			return map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_big", "type": "function",
				"function": map[string]any{"name": "WriteFile", "arguments": args}}}}
		}
		send(fn(`{"file_path":"`+path+`","content":"`), "")
		chunk := strings.Repeat("x", 64<<10)
		for sent := 0; sent < size; sent += len(chunk) {
			send(fn(chunk[:min(len(chunk), size-sent)]), "")
		}
		send(fn(`"}`), "tool_calls")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// peakHeap samples the live heap until stop is called and returns the
// highest sample above the heap at the start.
func peakHeap() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
				peak.Store(ms.HeapAlloc - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// BenchmarkToolArgument: a model streams one WriteFile argument through
// the real client into a session with the real store and the real tool:
// 50 MB (over context.max_tool_argument: refused) and 9 MiB (under
// WriteFile's 10 MiB: written). Reported: the peak live heap above the
// start (sampled every 2 ms), the bytes allocated, and the size of the
// session database afterwards.
func BenchmarkToolArgument(b *testing.B) {
	for _, size := range []int{50 << 20, 9 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) { benchToolArgument(b, size) })
	}
}

func benchToolArgument(b *testing.B, size int) {
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		dbPath := filepath.Join(dir, "odin.db")
		st, err := store.Open(context.Background(), dbPath)
		if err != nil {
			b.Fatal(err)
		}
		h := newHarness(b, llmtest.NewScript(), func(d *Deps) {
			srv := bigArgServer(b, filepath.Join(d.Root, "big.txt"), size)
			c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL, MaxRetries: -1})
			d.Models = ModelFunc(func(name string) (Model, error) {
				return Model{Client: c, ID: name + "-model", ContextWindow: 100000}, nil
			})
			d.Tools = tools.Builtin(tools.BuiltinOptions{})
			d.Config.Quality.RefactorLines = 1 << 30
			withStore(st)(d)
		})
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		stop := peakHeap()
		b.StartTimer()
		h.sess.Submit("write a big file", messages.ModeEdit)
		r := h.turn()
		b.StopTimer()
		peak := stop()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if r.Status != messages.TurnDone {
			b.Fatalf("turn: %s %s", r.Status, r.Error)
		}
		h.close()
		st.Close()
		var dbSize int64
		for _, p := range []string{dbPath, dbPath + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				dbSize += fi.Size()
			}
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "alloc-MB")
		b.ReportMetric(float64(dbSize)/(1<<20), "db-MB")
		b.StartTimer()
	}
}

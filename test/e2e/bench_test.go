package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// BenchmarkRunOverhead measures one two-turn `odin run` (a ReadFile call,
// then the answer) against the scripted server with zero latency: the
// wall time of the whole process and its peak resident memory. Targets:
// under 50 ms and under 40 MB.
func BenchmarkRunOverhead(b *testing.B) {
	work := b.TempDir()
	if err := os.WriteFile(filepath.Join(work, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	step := llmtest.Calls(llmtest.Call("ReadFile", map[string]any{"file_path": filepath.Join(work, "main.go")}))
	answer := llmtest.Reply("main.go has an empty main.")
	script := llmtest.NewScript()
	for range b.N + 1 {
		script.Add("orchestrator", step, answer)
	}
	srv := llmtest.NewServer(b, script)
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=",
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"), "NO_COLOR=1")
	run := func() (time.Duration, int64) {
		cmd := exec.Command(filepath.Join(binDir, "odin"), "run", "-q", "what is in main.go?")
		cmd.Dir, cmd.Env = work, env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("odin run: %v\n%s", err, out)
		}
		elapsed := time.Since(start)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return elapsed, ru.Maxrss // KiB on Linux
	}
	run() // warm the page cache and create the state database
	b.ResetTimer()
	var total time.Duration
	var peak int64
	for range b.N {
		d, rss := run()
		total += d
		peak = max(peak, rss)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/run")
	b.ReportMetric(float64(peak)/1024, "MB-peak")
}

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// The binary's own cost is measured as a user sees it: the built odin
// process against the scripted server with zero model latency, so what is
// left is Go's start, Odin's set-up and two loopback round trips. Each
// benchmark reports medians (a shared machine's noise hits single runs) and
// the process's own peak resident memory (GNU time's %M, see ownRSS). `make bench`
// runs them on a stripped build and prints them beside the baseline.

// BenchmarkRunOverhead measures one two-turn `odin run` (a ReadFile call,
// then the answer): wall and CPU time, peak RSS, time until the first
// request reached the server, and the first request's size.
func BenchmarkRunOverhead(b *testing.B) {
	work := b.TempDir()
	if err := os.WriteFile(filepath.Join(work, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	step := llmtest.Calls(llmtest.Call("ReadFile", map[string]any{"file_path": filepath.Join(work, "main.go")}))
	answer := llmtest.Reply("main.go has an empty main.")
	script := llmtest.NewScript()
	// Each iteration runs odin twice: once timed, once for its memory.
	for range 2*b.N + 1 {
		script.Add("orchestrator", step, answer)
	}
	srv := llmtest.NewServer(b, script)
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=",
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"), "NO_COLOR=1")
	args := []string{"run", "-q", "what is in main.go?"}
	run := func() (wall, first, cpu time.Duration, rssKiB int64) {
		cmd := exec.Command(filepath.Join(binDir, "odin"), args...)
		cmd.Dir, cmd.Env = work, env
		seen := len(srv.Requests())
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("odin run: %v\n%s", err, out)
		}
		wall = time.Since(start)
		if reqs := srv.Requests(); len(reqs) > seen {
			first = reqs[seen].Time.Sub(start)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		return wall, first, cpu, ru.Maxrss // KiB on Linux
	}
	run() // warm the page cache and create the state database
	b.ResetTimer()
	walls, firsts, cpus, rss := make([]float64, 0, b.N), make([]float64, 0, b.N), make([]float64, 0, b.N), make([]float64, 0, b.N)
	for range b.N {
		w, f, c, r := run()
		walls = append(walls, ms(w))
		firsts = append(firsts, ms(f))
		cpus = append(cpus, ms(c))
		if kib, ok := ownRSS(b, work, env, args); ok {
			r = kib
		}
		rss = append(rss, float64(r)/1024)
	}
	b.StopTimer()
	b.ReportMetric(median(walls), "ms/run")
	b.ReportMetric(median(firsts), "ms-to-1st-request")
	// CPU time (user + system) varies far less than wall time when
	// other work shares the cores.
	b.ReportMetric(median(cpus), "ms-cpu")
	b.ReportMetric(median(rss), "MB-rss")
	b.ReportMetric(slices.Max(rss), "MB-rss-max")
	b.ReportMetric(float64(len(srv.Requests()[0].Raw))/1000, "KB-1st-request")
}

// BenchmarkVersion measures `odin --version`: the floor of every command,
// Go's start plus Odin's package initialisation.
func BenchmarkVersion(b *testing.B) {
	bin := filepath.Join(binDir, "odin")
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
		b.Fatalf("odin --version: %v\n%s", err, out)
	}
	b.ResetTimer()
	walls, rss := make([]float64, 0, b.N), make([]float64, 0, b.N)
	for range b.N {
		cmd := exec.Command(bin, "--version")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("odin --version: %v\n%s", err, out)
		}
		walls = append(walls, ms(time.Since(start)))
		r := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
		if kib, ok := ownRSS(b, "", nil, []string{"--version"}); ok {
			r = kib
		}
		rss = append(rss, float64(r)/1024)
	}
	b.StopTimer()
	b.ReportMetric(median(walls), "ms/run")
	b.ReportMetric(median(rss), "MB-rss")
}

// ownRSS runs odin with args under GNU time and returns odin's own peak
// RSS in KiB. The rusage of a child this process starts directly is no
// use for that: Go starts children with CLONE_VM, and exec records the
// shared address space's high-water mark — this test binary's, with the
// scripted server in it — as the child's maxrss, a floor under every
// figure. GNU time fork()s, so its child's figure is the child's own.
// ok is false when /usr/bin/time is not GNU time (then the caller keeps
// the floored figure).
func ownRSS(b *testing.B, dir string, env, args []string) (kib int64, ok bool) {
	timeOnce.Do(func() {
		out, err := exec.Command("/usr/bin/time", "-f", "%M", "true").CombinedOutput()
		_, perr := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		gnuTime = err == nil && perr == nil
		if !gnuTime {
			b.Log("no GNU time at /usr/bin/time: MB-rss is floored at this test binary's own RSS")
		}
	})
	if !gnuTime {
		return 0, false
	}
	res := filepath.Join(b.TempDir(), "rss")
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", res, filepath.Join(binDir, "odin")}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("odin %v under time: %v\n%s", args, err, out)
	}
	data, err := os.ReadFile(res)
	if err != nil {
		b.Fatal(err)
	}
	kib, err = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		b.Fatalf("GNU time's %%M: %q", data)
	}
	return kib, true
}

var (
	timeOnce sync.Once
	gnuTime  bool
)

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// median of xs (which it sorts); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

//go:build unix

package search

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// runRgTimed runs ripgrep once the way a user runs it (parallel, output
// discarded) and returns its wall and CPU (user+system) time.
func runRgTimed(b *testing.B, rg, dir string, args ...string) (wall, cpu time.Duration) {
	b.Helper()
	cmd := exec.Command(rg, append([]string{"--no-config"}, args...)...)
	cmd.Dir = dir
	start := time.Now()
	if err := cmd.Run(); err != nil {
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 {
			b.Fatalf("rg %v: %v", args, err)
		}
	}
	wall = time.Since(start)
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// processCPU is this process's user+system time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchVsRg times fn against ripgrep doing the same work, interleaving the
// two so that load from other processes hits both alike. It reports the
// ratio of wall times (x-rg: 1.0 means as fast as rg) and of CPU times
// (x-rg-cpu, steadier on a loaded machine).
func benchVsRg(b *testing.B, rgArgs []string, fn func()) {
	rg := rgPath(b)
	root := goSrc(b)
	fn() // warm the page cache and the worker buffers
	runRgTimed(b, rg, root, rgArgs...)
	var ours, oursCPU, theirs, theirsCPU time.Duration
	b.ResetTimer()
	for range b.N {
		start, cpu := time.Now(), processCPU()
		fn()
		ours += time.Since(start)
		oursCPU += processCPU() - cpu
		b.StopTimer()
		wall, cpu := runRgTimed(b, rg, root, rgArgs...)
		theirs += wall
		theirsCPU += cpu
		b.StartTimer()
	}
	b.ReportMetric(float64(ours)/float64(theirs), "x-rg")
	b.ReportMetric(float64(oursCPU)/float64(theirsCPU), "x-rg-cpu")
	b.ReportMetric(float64(theirs.Microseconds())/1000/float64(b.N), "rg-ms/op")
}

func BenchmarkGrep(b *testing.B) {
	cases := []grepCase{
		{name: "literal", pattern: "func main", n: true},
		{name: "literal-rare", pattern: "ErrUnexpectedEOF", n: true},
		{name: "regex", pattern: `func \w+Error\(`, n: true},
		{name: "regex-alternation", pattern: `TODO|FIXME`, n: true},
		{name: "ignore-case", pattern: "deadline exceeded", i: true, n: true},
		{name: "ignore-case-word", pattern: "unmarshal", i: true, mode: FilesWithMatches},
		{name: "files", pattern: "sync.Mutex", mode: FilesWithMatches},
		{name: "count", pattern: "func ", mode: Count},
		{name: "no-literal", pattern: `[0-9]{9,}`, n: true},
		{name: "context", pattern: `panic\(`, n: true, a: 2, b: 2},
		{name: "multiline", pattern: `func main\(\) \{\n\s+fmt\.`, n: true, u: true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			root := goSrc(b)
			benchVsRg(b, c.rgArgs(), func() { c.run(b, root) })
		})
	}
}

func BenchmarkGlob(b *testing.B) {
	for _, pattern := range []string{"*.go", "**/testdata/**/*.txt"} {
		b.Run(pattern, func(b *testing.B) {
			root := goSrc(b)
			benchVsRg(b, []string{"--files", "-g", pattern}, func() {
				if _, err := Files(context.Background(), root, pattern, WalkOptions{}); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

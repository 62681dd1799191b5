package search

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// timeRg returns the median wall time of ripgrep over runs, run the way a
// user runs it (parallel, output discarded).
func timeRg(b *testing.B, rg, dir string, runs int, args ...string) time.Duration {
	b.Helper()
	var ds []time.Duration
	for range runs {
		cmd := exec.Command(rg, append([]string{"--no-config"}, args...)...)
		cmd.Dir = dir
		start := time.Now()
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				b.Fatalf("rg %v: %v", args, err)
			}
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// benchVsRg times fn against ripgrep doing the same work, interleaving the
// two so that load from other processes hits both alike, and reports the
// ratio of total times (x-rg: 1.0 means as fast as rg).
func benchVsRg(b *testing.B, rgArgs []string, fn func()) {
	rg := rgPath(b)
	root := goSrc(b)
	fn() // warm the page cache and the worker buffers
	timeRg(b, rg, root, 1, rgArgs...)
	var ours, theirs time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		fn()
		ours += time.Since(start)
		b.StopTimer()
		theirs += timeRg(b, rg, root, 1, rgArgs...)
		b.StartTimer()
	}
	b.ReportMetric(float64(ours)/float64(theirs), "x-rg")
	b.ReportMetric(float64(theirs.Microseconds())/1000/float64(b.N), "rg-ms/op")
}

func BenchmarkGrep(b *testing.B) {
	cases := []grepCase{
		{name: "literal", pattern: "func main", n: true},
		{name: "literal-rare", pattern: "ErrUnexpectedEOF", n: true},
		{name: "regex", pattern: `func \w+Error\(`, n: true},
		{name: "regex-alternation", pattern: `TODO|FIXME`, n: true},
		{name: "ignore-case", pattern: "deadline exceeded", i: true, n: true},
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

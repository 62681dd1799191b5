package stackgrow

import (
	"runtime"
	"testing"
)

// depth recurses n times through a frame of ~256 bytes, so that 60 calls
// need ~15 KiB of stack.
//
//go:noinline
func depth(n int) int {
	var b [256]byte
	b[n%len(b)] = byte(n)
	if n == 0 {
		return int(b[0])
	}
	return depth(n-1) + int(b[n%len(b)])
}

// TestGrowKeepsGoroutinesWorking runs the growth at the start of fresh
// goroutines, as Odin does, and deep calls after it: the results and the
// goroutines' ends are those without it.
func TestGrowKeepsGoroutinesWorking(t *testing.T) {
	for _, grow := range []func(){To16K, To32K, func() { To16K(); To32K() }} {
		done := make(chan int)
		go func() {
			grow()
			done <- depth(60)
		}()
		want := depth(60)
		if got := <-done; got != want {
			t.Fatalf("depth after growth = %d, want %d", got, want)
		}
	}
}

// TestGrowUsesTheStack checks that the growth reserves stack, not heap:
// a goroutine that grows to 32 KiB shows in StackInuse while it lives.
func TestGrowUsesTheStack(t *testing.T) {
	var before, during runtime.MemStats
	ready, release := make(chan struct{}), make(chan struct{})
	const n = 64
	runtime.ReadMemStats(&before)
	for range n {
		go func() {
			To32K()
			ready <- struct{}{}
			<-release
		}()
	}
	for range n {
		<-ready
	}
	runtime.ReadMemStats(&during)
	close(release)
	// 64 goroutines of 32 KiB each: 2 MiB, against 128 KiB at 2 KiB each.
	if grew := during.StackInuse - before.StackInuse; grew < n*24<<10 {
		t.Fatalf("StackInuse grew by %d bytes for %d goroutines grown to 32 KiB; want at least %d", grew, n, n*24<<10)
	}
}

package actors

import (
	"testing"
	"unsafe"
)

// deepFrame needs most of what growStack provides: called on a goroutine
// whose stack is smaller, it makes the runtime copy the stack elsewhere.
//
//go:noinline
func deepFrame(n int) byte {
	var frame [10 << 10]byte
	frame[n%len(frame)] = byte(n)
	return frame[(n*3+2)%len(frame)]
}

// stackMoved reports whether a goroutine's stack was copied while it ran
// deepFrame, after growStack when warm is set: a local's address changes
// when its stack moves.
func stackMoved(warm bool) bool {
	moved := make(chan bool)
	go func() {
		if warm {
			growStack(0)
		}
		var local byte
		before := uintptr(unsafe.Pointer(&local))
		local = deepFrame(int(local))
		moved <- uintptr(unsafe.Pointer(&local)) != before
	}()
	return <-moved
}

// After growStack a goroutine runs a 10 KiB frame on the stack it has:
// the growing is done up front, not by copies deep in the handlers.
func TestGrowStackSparesLaterCopies(t *testing.T) {
	if !stackMoved(false) {
		t.Skip("this runtime starts goroutines with a stack that already holds the frame; nothing to compare")
	}
	for range 20 {
		if stackMoved(true) {
			t.Fatal("the stack was copied after growStack: it did not grow the stack up front")
		}
	}
}

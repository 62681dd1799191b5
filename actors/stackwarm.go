package actors

import "github.com/odin-code/odin/internal/stackgrow"

// Every message an actor of Odin handles runs on a fresh goroutine:
// protoactor's dispatcher starts one whenever a mailbox gets work. A
// goroutine starts with a small stack and doubles it as calls go deeper;
// each doubling copies the stack, walking all its frames to adjust their
// pointers. A specialist's handlers and the Orchestrator's (building
// requests, starting runs, reading reports) went through two or three of
// those copies per message batch, deep in the call tree where they are
// dearest: in a fan-out of 256 specialists the mailboxes' stack copies
// were 3% of the process's CPU, and the model and tool calls' another 3%.
// Growing the stack once, at the goroutine's start, while it holds one
// frame, costs one cheap copy instead (measured with the model and tool
// call goroutines grown too: 6.4% of a 256-specialist turn's CPU in stack
// growth before, 2.8% after, the growing included).

// warmDispatcher is protoactor's goroutine dispatcher with the goroutine's
// stack grown to 16 KiB before the mailbox runs (the largest size the
// runtime hands out from its per-thread cache; 32 KiB measured worse).
// Odin's Orchestrator and specialists are spawned with it.
type warmDispatcher int

// actorThroughput is how many messages a mailbox handles before its
// goroutine yields: protoactor's default.
const actorThroughput = 300

// Schedule implements actor.Dispatcher.
func (warmDispatcher) Schedule(fn func()) {
	go func() {
		stackgrow.To16K()
		fn()
	}()
}

// Throughput implements actor.Dispatcher.
func (d warmDispatcher) Throughput() int { return int(d) }

// Package stackgrow grows the calling goroutine's stack while the stack is
// still shallow.
//
// A goroutine starts with a 2 KiB stack, and Go doubles it whenever a call
// needs more: it copies the stack and, for every frame on it, reads the
// function's entries in the binary's pcln tables (the frame's size, its
// pointer maps). Those tables are 12 MB of Odin's binary, read through
// page faults, so a deep stack copied in a short `odin run` (SQLite's
// statements, JSON-schema reflection, the model client) makes megabytes
// of them resident for the one lookup: 74 copies walked some 1,150 frames
// in a two-turn run. A goroutine known to go that deep calls To16K or
// To32K first: the stack is then copied once, with a few frames on it,
// and the deep calls that follow need no copy. The cost is the zeroing
// of one large frame (10–20 KiB) and the stack memory itself, which the
// goroutine would have reached anyway.
package stackgrow

// index keeps the compiler from proving which byte of a frame is read,
// so that the frame stays as large as declared.
var index int

// The frames leave room for the runtime's guard and the caller's
// frames: 10 KiB needs a 16 KiB stack, 20 KiB a 32 KiB one.
const (
	frame16K = 10 << 10
	frame32K = 20 << 10
)

// To16K makes the calling goroutine's stack at least 16 KiB.
func To16K() { grow16K() }

// To32K makes the calling goroutine's stack at least 32 KiB.
func To32K() { grow32K() }

//go:noinline
func grow16K() byte {
	var pad [frame16K]byte
	return pad[index]
}

//go:noinline
func grow32K() byte {
	var pad [frame32K]byte
	return pad[index]
}

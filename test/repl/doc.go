// Package repl tests Odin's interactive REPL end to end: the real odin
// binary runs in a pseudo-terminal against the scripted model server, and
// the tests type at it and read the screen. Every wait is bounded; a
// timeout fails with the screen read so far.
package repl

// Package search is the engine behind Odin's search tools (Grep, Glob,
// Tree, and the Init agent's project scan): a parallel directory walker
// that applies ripgrep's file selection rules (ignore files, hidden files,
// --glob overrides, --type filters), a pattern matcher, and a grep whose
// output is byte for byte what `rg --sort path` prints.
//
// Speed comes from the same ideas as ripgrep's: files are walked and
// searched by a bounded pool of workers; each file is read whole into a
// reused buffer; a literal that every match must contain is searched for
// in the whole buffer with SIMD-backed byte searches (or, for
// case-insensitive needles, a word-at-a-time scan) so only candidate lines
// are examined; and lines are verified by a lazily built DFA over the RE2
// program instead of Go's backtracking matcher. Multiline searches use Go's
// regexp on the whole file.
//
// Everything here is safe for concurrent use; walks and searches take a
// context and stop when it is done. Results are deterministic: sorted by
// path as `rg --sort path` sorts them.
package search

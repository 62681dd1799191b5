// Package search is the engine behind Odin's search tools (Grep, Glob,
// Tree): a parallel directory walker that applies ripgrep's file selection
// rules (ignore files, hidden files, --glob overrides, --type filters), a
// pattern matcher with a literal prefilter in front of Go's RE2 regexp, and
// a grep that prints exactly what `rg --sort path` prints.
//
// Everything here is safe for concurrent use; walks and searches take a
// context and stop when it is done. Output is deterministic: results are
// sorted by path as `rg --sort path` sorts them.
package search

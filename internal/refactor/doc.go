// Package refactor detects significant refactors in a change set from its
// files before and after: renames and moves of exported Go identifiers
// (compared with go/ast), files moved (one deleted, another created with
// the same content), and changes larger than a configured number of lines.
// The quality gates treat each finding like a multi-file change: review
// and QA become mandatory. It reads nothing itself; the caller hands it
// the contents.
package refactor

// Package rules classifies one command line given as words, with no shell
// syntax left: whether it is read-only (ReadOnly, the table readOnlyRules,
// each rule with commands it must and must not match), destructive
// (Destructive, the table destructiveRules), a test runner
// (IsTestCommand), or reads through symlinks (FollowsLinks). It knows
// nothing of paths, approvals or the shell walk that finds the words
// (internal/policy); adding a command form is one table row with its
// examples, which the table tests run.
package rules

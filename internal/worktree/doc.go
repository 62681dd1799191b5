// Package worktree gives an isolated specialist its own git worktree of
// the session's project and turns what it changed into a patch the
// Orchestrator applies with a 3-way merge (docs/workspaces.md).
//
// A Manager creates each worktree under Odin's state directory, never in
// the project: <state>/worktrees/<id>/tree is the worktree (HEAD plus the
// project's uncommitted changes, untracked files included, ignored ones
// not), beside it owner.json names the process that made it, and git/
// holds a private index and object directory, so that snapshotting the
// worktree writes nothing into the project's repository. Remove deletes a
// worktree and git's record of it; Sweep, run at start-up, does the same
// for those whose owner is dead (after kill -9).
//
// Git runs with the repository's hooks, fsmonitor and clean/smudge filters
// disarmed: its configuration is project-controlled. A Manager is safe for
// concurrent use.
package worktree

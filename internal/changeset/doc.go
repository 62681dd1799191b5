// Package changeset keeps one change set per turn that changes files in
// the session store and undoes the newest one. It joins the file
// snapshots of package checkpoint to the store: each file is saved to the
// store before its first change, and the content about to be written is
// recorded before each write, so even a killed run can be undone and undo
// can tell Odin's writes from someone else's later changes.
//
// A Tracker belongs to one turn and is safe for concurrent use
// (specialists write in parallel); Sets is safe for concurrent use.
// The CLI (`odin undo`, /undo, serve and cluster) calls Undo; the
// Orchestrator reaches Sets through actors.ChangeSets (adapted in
// cmd/odin, since nothing below cmd imports actors).
package changeset

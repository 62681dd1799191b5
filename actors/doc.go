// Package actors is Odin's actor system: the Orchestrator (one per
// session, whose mailbox is the input queue), the one generic Specialist
// actor configured by a roster entry, their supervision and deadlines, the
// layered tool filtering, and the execution of the quality gates, whose
// every decision is internal/gates' (gates.go only carries out its steps).
//
// Actors do not block in Receive: model calls, tool runs and disk work
// (gate diffs, a Code report's diffs, checkpoint commits, plan writes, QA
// checks, the journal's commits) happen in goroutines started by the
// async helpers and come back as messages, so Cancel and status queries
// are handled at once, even mid-turn. The
// Orchestrator's states are behaviours (idle, busy, gating stacked over
// busy, compacting stacked over either); a result arriving for a turn
// that has ended is recognised in one place (live).
// When quality gates ran, the turn's answer is written after the last of
// them (synthesis.go). Only the Orchestrator touches its conversation
// state.
//
// A specialist is spawned from its kind and started by a
// messages.Delegate; every run — foreground, background, detached,
// resumed — is in the session's agent-run registry (agentrun.go), kept
// across turns and in the store.
package actors

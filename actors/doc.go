// Package actors is Odin's actor system: the Orchestrator (one per
// session, whose mailbox is the input queue), the one generic Specialist
// actor configured by a roster entry, their supervision and deadlines, the
// layered tool filtering, and the quality gates enforced in code.
//
// Actors never block in Receive: model calls and tool runs happen in
// goroutines started by the async helper and come back as messages, so
// Cancel and status queries are handled at once, even mid-turn. Only the
// Orchestrator touches its conversation state.
package actors

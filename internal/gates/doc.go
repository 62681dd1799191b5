// Package gates holds the quality-gate rules as pure code: which change
// needs review and QA (Decide over ChangeFacts, GoAPIChanges), which
// review issues block (BlockingIssues), and the pipeline itself
// (Pipeline.Next): review → test → QA with bounded fix rounds, a value
// that turns each outcome into the next step. The Orchestrator executes
// the steps (actors/gates.go); nothing here spawns, reads or waits.
package gates

// Command odin is a terminal coding agent built as an actor system: an
// Orchestrator per session delegates to supervised specialists, and
// multi-file or risky changes pass quality gates enforced in code.
//
// Usage:
//
//	odin                    open the interactive REPL
//	odin run "task"         run one task headless
//	odin tool NAME 'JSON'   run one tool as an agent would
//
// Any OpenAI-compatible endpoint is the model (OPENAI_API_KEY,
// OPENAI_BASE_URL, or odin.yaml).
package main

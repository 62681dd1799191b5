// Package tools holds the built-in tools, one file trio (name.go, name.md,
// name_test.go) per tool, and the decorators that add cross-cutting
// behaviour (panic recovery, permissions, hooks). The contract every tool
// implements — Tool, Info, Env, Result, the typed constructor New that
// derives and enforces a tool's JSON schema — is package tools/tool, a
// leaf that policy, the sandbox and adapters import without importing the
// implementations; it has one name per type (no aliases here).
//
// A Tool is stateless and safe for concurrent use; per-call state (the
// project root, the calling agent's read state, the path guard) arrives in
// an *Env. A problem the model can fix is a Result with IsError set; a Go
// error means the runtime itself failed.
package tools

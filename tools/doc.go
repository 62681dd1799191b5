// Package tools defines the Tool contract that every model-callable tool
// implements, the typed constructor that derives and enforces a tool's JSON
// schema, the decorators that add cross-cutting behaviour (timeouts, panic
// recovery, permissions, hooks), and the built-in tools themselves, one
// file trio (name.go, name.md, name_test.go) per tool.
//
// A Tool is stateless and safe for concurrent use; per-call state (the
// project root, the calling agent's read state, the path guard) arrives in
// an *Env. A problem the model can fix is a Result with IsError set; a Go
// error means the runtime itself failed.
package tools

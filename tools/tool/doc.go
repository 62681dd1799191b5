// Package tool is the tool contract: what a model-callable tool is (Tool,
// Info, Result, Class), the per-call environment it runs in (Env, PathGuard,
// ReadState) and the interfaces the decorators of package tools consult
// (Permission, HookRunner). It imports no other Odin package, so policy,
// the sandbox and adapters such as MCP implement it without reaching back
// up into the tool implementations.
package tool

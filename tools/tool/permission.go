package tool

import (
	"context"
	"encoding/json"
)

// Permission decides whether a tool call may run. Authorize returns nil to
// allow it, an error satisfying IsDenied to refuse it (its text is shown to
// the model, so it should say which rule refused and what would allow it),
// or another error when deciding itself failed (a cancelled context while
// waiting for the user). It may block while a human is asked; it must be
// safe for concurrent use. internal/policy.Policy implements it.
type Permission interface {
	Authorize(ctx context.Context, env *Env, info Info, input json.RawMessage) error
}

// HookVerdict is what the user's hooks said about a tool call.
type HookVerdict struct {
	// Block, before a call: do not run the tool; after it: the hook
	// objected. Either way Message goes to the model.
	Block bool
	// Message is the blocking hook's explanation (its stderr).
	Message string
	// Context is hook output to add to what the model sees.
	Context string
	// Warnings are for the user (a hook failed, timed out or exited with a
	// code other than 0 and 2); they never block.
	Warnings []string
}

// HookRunner runs the user's hooks around tool calls.
// internal/policy.Hooks implements it. Implementations must be safe for
// concurrent use and must not fail the call when a hook itself breaks: that
// is a warning.
type HookRunner interface {
	PreToolUse(ctx context.Context, env *Env, info Info, input json.RawMessage) HookVerdict
	PostToolUse(ctx context.Context, env *Env, info Info, input json.RawMessage, res Result) HookVerdict
}

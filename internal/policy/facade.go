package policy

import (
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/hooks"
)

// The hook runner lives in internal/hooks; these names keep the callers
// written against policy working while they move over.
type (
	// HookInput is hooks.Input.
	HookInput = hooks.Input
	// HookToolResult is hooks.ToolResult.
	HookToolResult = hooks.ToolResult
	// HookResult is hooks.Result.
	HookResult = hooks.Result
	// HooksOptions is hooks.Options.
	HooksOptions = hooks.Options
	// Hooks is hooks.Hooks.
	Hooks = hooks.Hooks
)

// Hook events (hooks.PreToolUse, ...).
const (
	PreToolUse       = hooks.PreToolUse
	PostToolUse      = hooks.PostToolUse
	UserPromptSubmit = hooks.UserPromptSubmit
	SubagentStart    = hooks.SubagentStart
	SubagentStop     = hooks.SubagentStop
	Stop             = hooks.Stop
	PreCompact       = hooks.PreCompact
	// DefaultHookTimeout is hooks.DefaultTimeout.
	DefaultHookTimeout = hooks.DefaultTimeout
)

// HookEvents is hooks.Events.
func HookEvents() []string { return hooks.Events() }

// NewHooks is hooks.New.
func NewHooks(byEvent map[string][]config.Hook, opts HooksOptions) (*Hooks, error) {
	return hooks.New(byEvent, opts)
}

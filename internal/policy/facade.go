package policy

import (
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/hooks"
	"github.com/odin-code/odin/internal/policy/trust"
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

// Trust records and program pins live in internal/policy/trust.
type (
	// TrustStore is trust.Store.
	TrustStore = trust.Store
	// Program is trust.Program.
	Program = trust.Program
	// Pins is trust.Pins.
	Pins = trust.Pins
)

// ErrUnpinnable is trust.ErrUnpinnable.
var ErrUnpinnable = trust.ErrUnpinnable

// NewTrustStore is trust.NewStore.
func NewTrustStore(stateDir string, now func() time.Time) *TrustStore {
	return trust.NewStore(stateDir, now)
}

// PinProgram is trust.PinProgram.
func PinProgram(root string, p Program) (Pins, error) { return trust.PinProgram(root, p) }

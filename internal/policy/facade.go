package policy

import (
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/hooks"
	"github.com/odin-code/odin/internal/policy/approve"
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

// Verdicts, denials and approvals live in internal/policy/approve.
type (
	// Action is approve.Action.
	Action = approve.Action
	// Finding is approve.Finding.
	Finding = approve.Finding
	// Verdict is approve.Verdict.
	Verdict = approve.Verdict
	// Denial is approve.Denial.
	Denial = approve.Denial
	// Decision is approve.Decision.
	Decision = approve.Decision
	// RequestKind is approve.RequestKind.
	RequestKind = approve.RequestKind
	// Request is approve.Request.
	Request = approve.Request
	// Approver is approve.Approver.
	Approver = approve.Approver
	// Headless is approve.Headless.
	Headless = approve.Headless
	// Memory is approve.Memory.
	Memory = approve.Memory
	// BusApprover is approve.BusApprover.
	BusApprover = approve.BusApprover
)

// Actions, decisions, request kinds and rules (see approve).
const (
	Allow = approve.Allow
	Ask   = approve.Ask
	Deny  = approve.Deny

	AllowOnce    = approve.AllowOnce
	AllowSession = approve.AllowSession
	Reject       = approve.Reject

	KindCommand = approve.KindCommand
	KindPath    = approve.KindPath
	KindMCP     = approve.KindMCP

	RuleOutsideRoot  = approve.RuleOutsideRoot
	RuleProtected    = approve.RuleProtected
	RuleAgentFilter  = approve.RuleAgentFilter
	RuleMode         = approve.RuleMode
	RuleForbidden    = approve.RuleForbidden
	RuleNotAllowed   = approve.RuleNotAllowed
	RuleUnresolvable = approve.RuleUnresolvable
	RuleDynamic      = approve.RuleDynamic
	RuleUnsafeText   = approve.RuleUnsafeText
	RuleMCP          = approve.RuleMCP
	RuleNotApproved  = approve.RuleNotApproved
)

// ErrUnknownApproval is approve.ErrUnknownApproval.
var ErrUnknownApproval = approve.ErrUnknownApproval

// ParseDecision is approve.ParseDecision.
func ParseDecision(s string) (Decision, error) { return approve.ParseDecision(s) }

// NewMemory is approve.NewMemory.
func NewMemory(next Approver) *Memory { return approve.NewMemory(next) }

// NewBusApprover is approve.NewBusApprover.
func NewBusApprover(bus *events.Bus, newID func() string) *BusApprover {
	return approve.NewBusApprover(bus, newID)
}

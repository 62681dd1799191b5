package approve

import "errors"

// Rules name why something was refused or needs approval. They appear in
// denial messages and approval requests so users can tell which rule acted.
const (
	// RuleOutsideRoot: a path lies outside the project root and the
	// additional directories.
	RuleOutsideRoot = "outside-root"
	// RuleProtected: a write to .git internals, .odin policy files, odin.yaml
	// or Odin's own configuration and state; never allowed.
	RuleProtected = "protected-path"
	// RuleAgentFilter: an agent that may write only some kinds of files
	// (test, docs) tried to write another kind.
	RuleAgentFilter = "agent-write-filter"
	// RuleMode: ask and plan modes change nothing.
	RuleMode = "mode"
	// RuleForbidden: a command matches permissions.forbidden_commands or is a
	// privilege escalation.
	RuleForbidden = "forbidden-command"
	// RuleNotAllowed: a command that is neither read-only nor matched by
	// permissions.allowed_commands.
	RuleNotAllowed = "not-allowed"
	// RuleUnresolvable: a command whose effect cannot be known from its text
	// (eval, a command name from a variable, a parse error...).
	RuleUnresolvable = "unresolvable"
	// RuleDynamic: an argument whose value is only known at run time, so the
	// paths it names cannot be checked.
	RuleDynamic = "dynamic-argument"
	// RuleUnsafeText: control characters that terminals hide or that shells
	// and parsers read differently.
	RuleUnsafeText = "unsafe-text"
	// RuleMCP: a call of an MCP server's tool, which asks unless a pattern
	// allows the tool's name.
	RuleMCP = "mcp-tool"
	// RuleNotApproved: approval was needed and not given.
	RuleNotApproved = "not-approved"
)

// ErrUnknownApproval is returned by BusApprover.Answer for an ID that is not
// pending (already answered, cancelled, or never asked).
var ErrUnknownApproval = errors.New("approve: no pending approval with that id")

// Denial is a permission refusal. Its message is written for the model: what
// was refused, by which rule, and what would allow it. It satisfies
// tools.IsDenied.
type Denial struct {
	// Rule is the first rule that refused (one of the Rule constants).
	Rule string
	// Subject is the command or path refused.
	Subject string
	// Message is the full explanation.
	Message string
}

func (d *Denial) Error() string { return d.Message }

// Denied marks the error as a permission denial (see tools.IsDenied).
func (d *Denial) Denied() bool { return true }

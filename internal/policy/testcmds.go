package policy

import (
	"fmt"
	"github.com/odin-code/odin/internal/policy/rules"
	"strings"
)

// testCommandKinds names, for denial messages, the commands an agent whose
// filter has TestCommandsOnly may run.
const testCommandKinds = "test runners (go test, pytest, npm test, cargo test, jest, vitest, make test...) and read-only commands"

// agentCommand says why the guard's agent may not run name with args, or
// "" when it may. Only an agent whose write filter confines its commands
// (the Test agent) is limited: it runs test runners and read-only commands.
// Shells and cd are let through because the walker checks what they run.
// This is the approval layer; the boundary is the sandbox, where such an
// agent's commands see a read-only project (tool.Env.ReadOnlyCommands).
func (g *Guard) agentCommand(name string, args []string) string {
	if g == nil || g.filter == nil || !g.filter.TestCommandsOnly {
		return ""
	}
	if isShell(name) || name == "cd" || name == "pushd" || name == "popd" {
		return ""
	}
	if ok, _, _ := rules.ReadOnly(name, args); ok {
		return ""
	}
	if rules.IsTestCommand(name, args) {
		return ""
	}
	return fmt.Sprintf("the %s agent may run only %s; `%s` is neither (rule %s)",
		g.filter.Agent, testCommandKinds, strings.TrimSpace(name+" "+strings.Join(args, " ")), RuleAgentFilter)
}

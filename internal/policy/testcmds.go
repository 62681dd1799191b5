package policy

import (
	"fmt"
	"path/filepath"
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
	if ok, _, _ := readOnly(name, args); ok {
		return ""
	}
	if testCommand(name, args) {
		return ""
	}
	return fmt.Sprintf("the %s agent may run only %s; `%s` is neither (rule %s)",
		g.filter.Agent, testCommandKinds, strings.TrimSpace(name+" "+strings.Join(args, " ")), RuleAgentFilter)
}

// testCommand reports whether name args runs a project's tests. Options
// that make a test runner run another program or write a file where the
// caller chooses are refused.
func testCommand(name string, args []string) bool {
	base := filepath.Base(name)
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	for _, a := range args {
		switch {
		case a == "-exec" || strings.HasPrefix(a, "-exec=") || a == "-toolexec" || strings.HasPrefix(a, "-toolexec="),
			a == "-o" || strings.HasPrefix(a, "-o="):
			return false
		}
	}
	switch base {
	case "go":
		return sub == "test" || sub == "vet"
	case "pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "ava", "tap":
		return true
	case "python", "python3":
		return len(args) >= 2 && args[0] == "-m" && (args[1] == "pytest" || args[1] == "unittest")
	case "npm", "pnpm", "yarn", "bun":
		if sub == "test" || sub == "t" {
			return true
		}
		if sub == "run" && len(args) > 1 {
			return strings.HasPrefix(args[1], "test")
		}
		if sub == "exec" && len(args) > 1 {
			return testCommand(args[1], args[2:])
		}
		return base == "yarn" && (sub == "jest" || sub == "vitest" || sub == "mocha")
	case "npx":
		return len(args) > 0 && testCommand(args[0], args[1:])
	case "cargo":
		return sub == "test" || sub == "nextest"
	case "make":
		return sub == "test" || strings.HasPrefix(sub, "test-") || sub == "check"
	case "bundle":
		return len(args) >= 2 && sub == "exec" && testCommand(args[1], args[2:])
	case "dotnet", "swift", "deno", "mix":
		return sub == "test"
	case "mvn", "mvnw", "gradle", "gradlew":
		return sub == "test" || sub == "verify" || sub == "check"
	}
	return false
}

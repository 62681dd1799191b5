package rules

import (
	"path/filepath"
	"strings"
)

// testCommand reports whether name args runs a project's tests. Options
// that make a test runner run another program or write a file where the
// caller chooses are refused.
func IsTestCommand(name string, args []string) bool {
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
			return IsTestCommand(args[1], args[2:])
		}
		return base == "yarn" && (sub == "jest" || sub == "vitest" || sub == "mocha")
	case "npx":
		return len(args) > 0 && IsTestCommand(args[0], args[1:])
	case "cargo":
		return sub == "test" || sub == "nextest"
	case "make":
		return sub == "test" || strings.HasPrefix(sub, "test-") || sub == "check"
	case "bundle":
		return len(args) >= 2 && sub == "exec" && IsTestCommand(args[1], args[2:])
	case "dotnet", "swift", "deno", "mix":
		return sub == "test"
	case "mvn", "mvnw", "gradle", "gradlew":
		return sub == "test" || sub == "verify" || sub == "check"
	}
	return false
}

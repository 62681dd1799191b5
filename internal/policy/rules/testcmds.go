package rules

import (
	"path/filepath"
	"slices"
	"strings"
)

// testRunners maps a program to whether its arguments run a project's
// tests; TestIsTestCommand holds the examples. It is filled in init
// because some runners hand over to another (npx jest).
var testRunners map[string]func(name string, args []string) bool

func init() {
	testRunners = map[string]func(name string, args []string) bool{
		"go":     sub("test", "vet"),
		"cargo":  sub("test", "nextest"),
		"make":   func(_ string, args []string) bool { return sub("test", "check")("", args) || subPrefix(args, "test-") },
		"python": pythonTests, "python3": pythonTests,
		"npm": jsTests, "pnpm": jsTests, "yarn": jsTests, "bun": jsTests,
		"npx": func(_ string, args []string) bool { return len(args) > 0 && IsTestCommand(args[0], args[1:]) },
		"bundle": func(_ string, args []string) bool {
			return len(args) >= 2 && args[0] == "exec" && IsTestCommand(args[1], args[2:])
		},
		"dotnet": sub("test"), "swift": sub("test"), "deno": sub("test"), "mix": sub("test"),
		"mvn": sub("test", "verify", "check"), "mvnw": sub("test", "verify", "check"),
		"gradle": sub("test", "verify", "check"), "gradlew": sub("test", "verify", "check"),
	}
}

// dedicatedRunners only run tests, whatever their arguments.
var dedicatedRunners = []string{"pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "ava", "tap"}

// IsTestCommand reports whether name args runs a project's tests. Options
// that make a test runner run another program or write a file where the
// caller chooses are refused.
func IsTestCommand(name string, args []string) bool {
	for _, a := range args {
		if a == "-exec" || strings.HasPrefix(a, "-exec=") || a == "-toolexec" || strings.HasPrefix(a, "-toolexec=") ||
			a == "-o" || strings.HasPrefix(a, "-o=") {
			return false
		}
	}
	base := filepath.Base(name)
	if slices.Contains(dedicatedRunners, base) {
		return true
	}
	if f := testRunners[base]; f != nil {
		return f(base, args)
	}
	return false
}

// sub: the first argument is one of subs.
func sub(subs ...string) func(string, []string) bool {
	return func(_ string, args []string) bool { return len(args) > 0 && slices.Contains(subs, args[0]) }
}

func subPrefix(args []string, p string) bool { return len(args) > 0 && strings.HasPrefix(args[0], p) }

// pythonTests: python -m pytest, python -m unittest.
func pythonTests(_ string, args []string) bool {
	return len(args) >= 2 && args[0] == "-m" && (args[1] == "pytest" || args[1] == "unittest")
}

// jsTests: npm test, npm t, npm run test*, npm exec RUNNER, yarn jest.
func jsTests(base string, args []string) bool {
	switch {
	case sub("test", "t")("", args):
		return true
	case len(args) > 1 && args[0] == "run":
		return strings.HasPrefix(args[1], "test")
	case len(args) > 1 && args[0] == "exec":
		return IsTestCommand(args[1], args[2:])
	}
	return base == "yarn" && sub("jest", "vitest", "mocha")("", args)
}

package main

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// allCommands is every command of the tree below root, root first.
func allCommands(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for i := 0; i < len(out); i++ {
		out = append(out, out[i].Commands()...)
	}
	return out
}

// checkUsageLine fails unless text is one line that names path once, as
// its prefix, and points at path's --help: what `odin attach` printed as
// "odin: odin attach: accepts 1 arg(s), received 0".
func checkUsageLine(t *testing.T, path, text string) {
	t.Helper()
	text = strings.TrimSuffix(text, "\n")
	if strings.Contains(text, "\n") {
		t.Errorf("%s: not one line:\n%s", path, text)
	}
	if !strings.HasPrefix(text, path+": ") {
		t.Errorf("%s: does not start with %q: %q", path, path+": ", text)
	}
	if strings.Contains(text, "odin: odin") || strings.Count(text, path+": ") != 1 {
		t.Errorf("%s: command named twice as a prefix: %q", path, text)
	}
	if !strings.Contains(text, "see "+path+" --help") {
		t.Errorf("%s: no pointer to %s --help: %q", path, path, text)
	}
}

// TestEveryCommandsUnknownFlagIsOneUsageLine runs each command of the
// real tree with a flag it does not have: exit 2 and one line naming the
// command once. Flags are parsed before a command runs, so nothing starts.
func TestEveryCommandsUnknownFlagIsOneUsageLine(t *testing.T) {
	for _, c := range allCommands(newRootCmd(nil, nil, nil, false)) {
		path := c.CommandPath()
		args := append(strings.Fields(path)[1:], "--no-such-flag")
		var stdout, stderr bytes.Buffer
		code := Main(args, strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d; stderr: %s", path, code, exitUsage, stderr.String())
			continue
		}
		checkUsageLine(t, path, stderr.String())
		if !strings.Contains(stderr.String(), "unknown flag: --no-such-flag") {
			t.Errorf("%s: does not name the flag: %q", path, stderr.String())
		}
	}
}

// TestEveryCommandsArgumentErrorIsOneUsageLine checks each command's own
// argument check, as cobra runs it, with none and with too many: where it
// refuses, the message names the command once, shows its usage and points
// at --help.
func TestEveryCommandsArgumentErrorIsOneUsageLine(t *testing.T) {
	refused := 0
	for _, c := range allCommands(newRootCmd(nil, nil, nil, false)) {
		if c.Args == nil || !c.HasParent() {
			continue // root takes any words as its first message
		}
		for _, args := range [][]string{nil, {"w1", "w2", "w3", "w4", "w5"}} {
			err := c.Args(c, args)
			if err == nil {
				continue
			}
			refused++
			code := exitFailed
			if ee := (*exitError)(nil); errors.As(err, &ee) {
				code = ee.code
			}
			if code != exitUsage {
				t.Errorf("%s %v: exit code %d, want %d", c.CommandPath(), args, code, exitUsage)
			}
			checkUsageLine(t, c.CommandPath(), errorText(err))
		}
	}
	if refused < 10 {
		t.Errorf("only %d argument errors checked; the walk missed the commands", refused)
	}
}

// TestUsageErrorsThroughMain pins the whole line for the kinds of usage
// error: a missing argument, a stray one, an unknown subcommand, a flag
// value that does not parse.
func TestUsageErrorsThroughMain(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // a regexp for the whole of stderr
	}{
		{[]string{"attach"}, `^odin attach: accepts 1 arg\(s\), received 0 \(usage: odin attach ID \[flags\]; see odin attach --help\)\n$`},
		{[]string{"sessions", "export", "a", "b"}, `^odin sessions export: accepts 1 arg\(s\), received 2 \(usage: odin sessions export ID\|PREFIX \[flags\]; see odin sessions export --help\)\n$`},
		{[]string{"agents", "nosuch"}, `^odin agents: takes no arguments \(got "nosuch"; usage: odin agents \[flags\]; see odin agents --help\)\n$`},
		{[]string{"mcp", "lst"}, `^odin mcp: unknown command "lst"; did you mean list\? \(see odin mcp --help\)\n$`},
		{[]string{"help", "nosuch"}, `^odin: unknown command "nosuch" \(commands: acp, agents, .*; see odin --help\)\n$`},
		{[]string{"run", "--max-turns", "abc", "x"}, `^odin run: --max-turns "abc": want a whole number \(see odin run --help\)\n$`},
		{[]string{"run", "--bogus"}, `^odin run: unknown flag: --bogus \(see odin run --help\)\n$`},
		{[]string{"--bogus"}, `^odin: unknown flag: --bogus \(see odin --help\)\n$`},
		{[]string{"run", "--max-turns"}, `^odin run: flag needs an argument: --max-turns \(see odin run --help\)\n$`},
		// A flag's value checked by the command itself, not by pflag.
		{[]string{"run", "-o", "bogus", "x"}, `^odin run: --output-format must be text, json, stream-json or odin-stream \(got "bogus"; see odin run --help\)\n$`},
		{[]string{"run", "--permission-mode", "nope", "x"}, `^odin run: --permission-mode must be default, acceptEdits, plan or bypassPermissions \(got "nope"; see odin run --help\)\n$`},
		{[]string{"doctor", "nosuchcheck"}, `^odin doctor: no check "nosuchcheck" \(checks: config, .*; see odin doctor --help\)\n$`},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(tc.args, strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage {
			t.Errorf("odin %s: exit %d, want %d", strings.Join(tc.args, " "), code, exitUsage)
		}
		if !regexp.MustCompile(tc.want).MatchString(stderr.String()) {
			t.Errorf("odin %s: stderr\n%q\ndoes not match\n%s", strings.Join(tc.args, " "), stderr.String(), tc.want)
		}
	}
}

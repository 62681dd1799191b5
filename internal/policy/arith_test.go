package policy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/policy/shell"
	"github.com/odin-code/odin/messages"
	"mvdan.cc/sh/v3/syntax"
)

// TestArithContexts runs every example of the arithmetic table: what bash
// runs or the check cannot tell apart is refused in ask mode and never
// allowed in edit mode, even when the allowed pattern is `*`; the safe
// forms run in ask mode.
func TestArithContexts(t *testing.T) {
	f := newFixture(t)
	ask := f.commands(t)
	all, err := NewCommands(f.guard(t), config.Permissions{AllowedCommands: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range shell.ArithContexts {
		if len(c.Runs)+len(c.Refused) == 0 || len(c.Safe) == 0 {
			t.Errorf("%s: a context needs examples to refuse and to allow", c.Name)
		}
		for _, cmd := range append(append([]string(nil), c.Runs...), c.Refused...) {
			if seen[cmd] {
				t.Errorf("%s: %q is listed twice", c.Name, cmd)
			}
			seen[cmd] = true
			if v := ask.Check(cmd, messages.ModeAsk); v.Action != Deny {
				t.Errorf("%s: %q in ask mode: %v, want deny", c.Name, cmd, v)
			}
			if v := all.Check(cmd, messages.ModeEdit); v.Action == Allow {
				t.Errorf("%s: %q in edit mode allowing `*`: allowed, want it to need approval", c.Name, cmd)
			} else if v.Action == Ask && !hasRule(v, RuleUnresolvable) {
				t.Errorf("%s: %q in edit mode allowing `*`: %v, want a %s finding", c.Name, cmd, v, RuleUnresolvable)
			}
		}
		for _, cmd := range c.Safe {
			if v := ask.Check(cmd, messages.ModeAsk); v.Action != Allow {
				t.Errorf("%s: safe %q in ask mode: %v, want allow", c.Name, cmd, v)
			}
		}
	}
}

// TestArithContextsInBash proves the table against bash: every Runs
// example creates the shell.Canary file, every Safe example does not. The
// examples run inside a function (local needs one) after a preamble
// giving them an indexed array a, positional parameters, a variable x
// whose value is a subscript with a command substitution and a variable v
// whose value is an array assignment with one, as an attacker would have
// set them in an earlier command.
func TestArithContextsInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed; the table's claims about bash are not checked")
	}
	runs := func(t *testing.T, cmd string) bool {
		t.Helper()
		dir := t.TempDir()
		script := "f() {\na=(0 1 2); x='b[$(touch " + shell.Canary + ")]'; v='([$(touch " + shell.Canary + ")]=1)'; set -- 1 2 3\n" + cmd + "\n}; f"
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", script)
		c.Dir = dir
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		out, err := c.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%q: bash did not finish: %v\n%s", cmd, err, out)
		}
		_, statErr := os.Stat(filepath.Join(dir, shell.Canary))
		return statErr == nil
	}
	for _, c := range shell.ArithContexts {
		for _, cmd := range c.Runs {
			if !strings.Contains(cmd, shell.Canary) && !strings.Contains(cmd, "x") && !strings.Contains(cmd, "$v") {
				t.Errorf("%s: %q runs nothing an attacker placed", c.Name, cmd)
			}
			if !runs(t, cmd) {
				t.Errorf("%s: %q is listed as running its substitution, but bash did not create the shell.Canary", c.Name, cmd)
			}
		}
		for _, cmd := range c.Safe {
			if runs(t, cmd) {
				t.Errorf("%s: %q is listed as safe, but bash created the shell.Canary", c.Name, cmd)
			}
		}
		for _, cmd := range c.Refused {
			t.Logf("%s: refused %q runs in bash: %v", c.Name, cmd, runs(t, cmd))
		}
	}
}

// TestCrashers: inputs that once panicked the check (A=([0]=) printed the
// missing value of an array element) get the verdict their words deserve.
func TestCrashers(t *testing.T) {
	f := newFixture(t)
	c := f.commands(t)
	for _, tc := range []struct {
		cmd  string
		mode messages.Mode
		want Action
	}{
		{"A=([0]=)", messages.ModeAsk, Deny}, // sets an environment-style name
		{"A=([0]=)", messages.ModeEdit, Ask},
		{"a=([0]=) b=([1]=)", messages.ModeAsk, Allow},
		{"declare -a a=([0]=)", messages.ModeAsk, Allow},
		{"echo $(( )) ; (( ))", messages.ModeAsk, Deny},
		{"a[]=1", messages.ModeAsk, Deny},
		{"echo ${a[]} ${x:} ${x::}", messages.ModeAsk, Deny},
		{"z=([]=1)", messages.ModeAsk, Deny},
	} {
		if v := c.Check(tc.cmd, tc.mode); v.Action != tc.want {
			t.Errorf("%q in %s mode: %v, want %v", tc.cmd, tc.mode, v, tc.want)
		}
	}
	if v := shell.Print((*syntax.Word)(nil)); v != "" {
		t.Errorf("shell.Print(nil word) = %q", v)
	}
	// Empty text to scan as code is no word at all.
	w := &walker{c: c, mode: messages.ModeAsk, ro: true}
	w.codeText("")
}

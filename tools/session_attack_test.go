package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/tools/tool"
)

// recordingApprover approves the requests approve accepts and records
// every subject it was asked about.
type recordingApprover struct {
	mu      sync.Mutex
	asked   []string
	approve func(policy.Request) bool
}

func (a *recordingApprover) Approve(_ context.Context, r policy.Request) (policy.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r.Subject)
	if a.approve != nil && a.approve(r) {
		return policy.AllowOnce, nil
	}
	return policy.Reject, nil
}

func (a *recordingApprover) subjects() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// guardedShell is ShellSession behind the session policy of root, as the
// CLI wires it.
func guardedShell(t *testing.T, root string, l *sandbox.Launcher, ap policy.Approver) (tool.Tool, *tool.Env) {
	t.Helper()
	pol, err := policy.New(policy.Options{Root: root, Permissions: config.Permissions{}, Approver: ap})
	if err != nil {
		t.Fatal(err)
	}
	sessions := NewSessions()
	t.Cleanup(sessions.Close)
	set := NewSet(NewShellSession(ExecuteCommandOptions{Launcher: l}, sessions), NewPython(ExecuteCommandOptions{Launcher: l}, sessions)).
		Map(WithPermission(pol), WithRecover)
	tl, _ := set.Get(NameShellSession)
	env := &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "t1", SessionID: "s1", Guard: pol.GuardFor("code", "t1")}
	return tl, env
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestShellSessionRefusedLineDoesNotRun: a line the policy refuses (here:
// not allowed, and nobody approves) never reaches the shell.
func TestShellSessionRefusedLineDoesNotRun(t *testing.T) {
	root := realTemp(t)
	l := bwrapLauncher(t, root)
	ap := &recordingApprover{}
	tl, env := guardedShell(t, root, l, ap)
	res, oc := shellCall(t, tl, env, map[string]any{"command": "echo hello"})
	if oc.ExitCode != 0 || !strings.Contains(res.Output, "hello") {
		t.Fatalf("a read-only command did not run:\n%s", res.Output)
	}
	res, _ = shellCall(t, tl, env, map[string]any{"command": "touch canary"})
	if !res.Denied {
		t.Errorf("an unapproved write was not denied:\n%s", res.Output)
	}
	if exists(filepath.Join(root, "canary")) {
		t.Errorf("the refused line ran: canary exists")
	}
	if got := ap.subjects(); len(got) != 1 || got[0] != "touch canary" {
		t.Errorf("approver asked %q, want the refused line once", got)
	}
}

// TestShellSessionAskModeBlocksWrites: in ask mode a write is refused by
// the policy and, should a line get past it, by the read-only sandbox.
func TestShellSessionAskModeBlocksWrites(t *testing.T) {
	root := realTemp(t)
	l := bwrapLauncher(t, root)
	tl, env := guardedShell(t, root, l, &recordingApprover{approve: func(policy.Request) bool { return true }})
	env.Mode = "ask"
	res, _ := shellCall(t, tl, env, map[string]any{"command": "echo hi > canary"})
	if !res.Denied || exists(filepath.Join(root, "canary")) {
		t.Errorf("ask mode let a write through the policy (denied %v):\n%s", res.Denied, res.Output)
	}
	// Past the policy: the shell itself is confined read-only.
	sessions := NewSessions()
	defer sessions.Close()
	bare := NewShellSession(ExecuteCommandOptions{Launcher: l}, sessions)
	res, _ = shellCall(t, bare, &tool.Env{Root: root, Mode: "ask", Agent: "code", AgentID: "t2", SessionID: "s1"},
		map[string]any{"command": "echo hi > canary2; touch canary3"})
	for _, f := range []string{"canary2", "canary3"} {
		if exists(filepath.Join(root, f)) {
			t.Errorf("the ask-mode shell wrote %s:\n%s", f, res.Output)
		}
	}
}

// TestShellSessionPolicyFollowsCwd: after the shell has cd'd out of the
// project (the user approved the cd), a write by relative path is checked
// where the shell is, not in the project root. Without the sandbox, the
// policy is the only barrier here: the canary shows whether it held.
func TestShellSessionPolicyFollowsCwd(t *testing.T) {
	root := realTemp(t)
	outside := realTemp(t)
	ap := &recordingApprover{approve: func(r policy.Request) bool { return strings.HasPrefix(r.Subject, "cd ") }}
	tl, env := guardedShell(t, root, sandbox.New(sandbox.Options{Mode: sandbox.ModeOff, Root: root}), ap)
	res, oc := shellCall(t, tl, env, map[string]any{"command": "cd " + outside})
	if oc.Cwd != outside {
		t.Fatalf("the approved cd did not move the shell (cwd %q):\n%s", oc.Cwd, res.Output)
	}
	res, _ = shellCall(t, tl, env, map[string]any{"command": "echo pwned > canary"})
	if exists(filepath.Join(outside, "canary")) {
		t.Fatalf("a write outside the project ran unasked (checked against the project root?):\n%s", res.Output)
	}
	if !res.Denied {
		t.Errorf("the write was not refused:\n%s", res.Output)
	}
	// And cd / then a write: checked against /, the canary never appears.
	res, _ = shellCall(t, tl, env, map[string]any{"command": "cd /"})
	res, _ = shellCall(t, tl, env, map[string]any{"command": "touch odin-shell-canary-" + filepath.Base(root)})
	if p := "/odin-shell-canary-" + filepath.Base(root); exists(p) {
		os.Remove(p)
		t.Fatalf("cd / then a write ran unasked:\n%s", res.Output)
	}
}

// TestPythonPersistsAndHidesSecrets: the interpreter keeps its variables
// across calls, returns the trailing expression's value and exceptions,
// survives a timeout, and never sees Odin's secrets.
func TestPythonPersistsAndHidesSecrets(t *testing.T) {
	root := realTemp(t)
	l := bwrapLauncher(t, root)
	t.Setenv("OPENAI_API_KEY", "sk-python-canary-7731")
	t.Setenv("ODIN_TEST_SECRET", "hush-python-canary-8842")
	sessions := NewSessions()
	defer sessions.Close()
	py := NewPython(ExecuteCommandOptions{Launcher: l}, sessions)
	env := &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "t1", SessionID: "s1"}
	call := func(in map[string]any) (tool.Result, PythonOutcome) {
		t.Helper()
		res, err := py.Run(t.Context(), env, mustJSON(t, in))
		if err != nil {
			t.Fatal(err)
		}
		oc, _ := res.Meta.(PythonOutcome)
		return res, oc
	}
	res, oc := call(map[string]any{"code": "import os\nx = 41\nprint('hi')\nx + 1"})
	if oc.Value != "42" || !strings.Contains(res.Output, "hi") {
		t.Fatalf("first snippet: value %q\n%s", oc.Value, res.Output)
	}
	res, oc = call(map[string]any{"code": "x * 2"})
	if oc.Value != "82" || oc.Restarted {
		t.Errorf("state lost between calls: value %q restarted %v\n%s", oc.Value, oc.Restarted, res.Output)
	}
	res, oc = call(map[string]any{"code": "1/0"})
	if !strings.Contains(oc.Exception, "ZeroDivisionError") || !res.IsError {
		t.Errorf("exception not returned:\n%s", res.Output)
	}
	res, oc = call(map[string]any{"code": "import sys; print('err', file=sys.stderr); print(input.__name__); open('/dev/stdin').read()"})
	if !strings.Contains(res.Output, "err") || oc.Exception != "" {
		t.Errorf("stderr or stdin wrong:\n%s", res.Output)
	}
	res, oc = call(map[string]any{"code": "while True: pass", "timeout": 1000})
	if !oc.TimedOut {
		t.Errorf("no timeout:\n%s", res.Output)
	}
	res, oc = call(map[string]any{"code": "import subprocess\nprint(dict(os.environ))\nprint(subprocess.run(['env'], capture_output=True, text=True).stdout)\nx"})
	if oc.Value != "41" {
		t.Errorf("the interpreter did not survive the timeout: value %q\n%s", oc.Value, res.Output)
	}
	for _, secret := range []string{"sk-python-canary", "hush-python-canary"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("secret %s reached the interpreter:\n%s", secret, res.Output)
		}
	}
	// The shell sees none either.
	sh := NewShellSession(ExecuteCommandOptions{Launcher: l}, sessions)
	res, _ = shellCall(t, sh, env, map[string]any{"command": "env; cat /proc/self/environ"})
	for _, secret := range []string{"sk-python-canary", "hush-python-canary"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("secret %s reached the shell:\n%s", secret, res.Output)
		}
	}
}

// TestShellSessionFunctionsDoNotPersist: a function approved in one call
// (its body a write) does not run, under a read-only command's name, in a
// later call the policy allows without asking.
func TestShellSessionFunctionsDoNotPersist(t *testing.T) {
	root := realTemp(t)
	l := bwrapLauncher(t, root)
	ap := &recordingApprover{approve: func(r policy.Request) bool { return strings.Contains(r.Subject, "ls()") }}
	tl, env := guardedShell(t, root, l, ap)
	res, _ := shellCall(t, tl, env, map[string]any{"command": "ls() { touch canary; }; alias cat='touch canary2'; trap 'touch canary3' DEBUG"})
	if res.Denied {
		t.Fatalf("the definition was not approved:\n%s", res.Output)
	}
	for _, f := range []string{"canary", "canary2", "canary3"} {
		os.Remove(filepath.Join(root, f)) // the DEBUG trap fires in the defining call itself
	}
	res, _ = shellCall(t, tl, env, map[string]any{"command": "ls; cat /dev/null; echo done"})
	if res.Denied || !strings.Contains(res.Output, "done") {
		t.Fatalf("the read-only line did not run:\n%s", res.Output)
	}
	for _, f := range []string{"canary", "canary2", "canary3"} {
		if exists(filepath.Join(root, f)) {
			t.Errorf("%s: a definition of an earlier call ran unchecked:\n%s", f, res.Output)
		}
	}
}

// TestShellSessionPlantedRepositorySwept: the shell lives on after a call,
// and the user's git may run in the project meanwhile (a shell prompt in
// another terminal). A repository a call planted in a subdirectory, whose
// config runs a program, is gone when the call returns, not only when the
// session ends.
func TestShellSessionPlantedRepositorySwept(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	root := realTemp(t)
	canary := filepath.Join(t.TempDir(), "fsmonitor-ran")
	l := bwrapLauncher(t, root)
	ap := &recordingApprover{approve: func(policy.Request) bool { return true }}
	tl, env := guardedShell(t, root, l, ap)
	// The model wrote the script with WriteFile; running it is approved.
	if err := os.WriteFile(filepath.Join(root, "plant.sh"), []byte("mkdir -p src/a && git init -q src/a && git -C src/a config core.fsmonitor 'touch "+canary+"; false' && echo planted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, oc := shellCall(t, tl, env, map[string]any{"command": "bash plant.sh"})
	if oc.ExitCode != 0 || !strings.Contains(res.Output, "planted") {
		t.Fatalf("the plant did not run (the test proves nothing):\n%s", res.Output)
	}
	// The session is still alive; the user runs git there.
	cmd := exec.Command(git, "status")
	cmd.Dir = filepath.Join(root, "src", "a")
	_ = cmd.Run()
	if exists(canary) {
		t.Errorf("the user's git ran what a ShellSession call planted, while the session lived:\n%s", res.Output)
	}
	if res, _ := shellCall(t, tl, env, map[string]any{"command": "echo alive"}); !strings.Contains(res.Output, "alive") {
		t.Errorf("the session did not survive the sweep:\n%s", res.Output)
	}
}

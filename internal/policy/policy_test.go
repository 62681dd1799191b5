package policy

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

type cmdInput struct {
	Command string `json:"command"`
}

type fileInput struct {
	FilePath string `json:"file_path"`
}

// counted returns a tool of the given class that counts its runs.
func counted(name string, class tool.Class, runs *atomic.Int32) tool.Tool {
	switch class {
	case tool.ClassExecute:
		return tool.New(name, class, "test tool", func(ctx context.Context, env *tool.Env, in cmdInput) (tool.Result, error) {
			runs.Add(1)
			return tool.Result{Output: "ran " + in.Command}, nil
		})
	default:
		return tool.New(name, class, "test tool", func(ctx context.Context, env *tool.Env, in fileInput) (tool.Result, error) {
			runs.Add(1)
			return tool.Result{Output: "touched " + in.FilePath}, nil
		})
	}
}

func newPolicy(t *testing.T, f fixture, approver Approver) *Policy {
	t.Helper()
	p, err := New(Options{
		Root:        f.root,
		Permissions: config.Permissions{AllowedCommands: []string{"go test *"}, ForbiddenCommands: []string{"git push*"}, AdditionalDirs: []string{f.shared}},
		Protected:   []string{f.userconf},
		Approver:    approver,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAuthorizeByClassAndMode(t *testing.T) {
	f := newFixture(t)
	p := newPolicy(t, f, Headless{})
	type tc struct {
		name   string
		class  tool.Class
		mode   string
		input  string
		denied bool
		rule   string
	}
	cases := []tc{
		{"read in ask", tool.ClassRead, "ask", `{"file_path":"main.go"}`, false, ""},
		{"web in plan", tool.ClassWeb, "plan", `{}`, false, ""},
		{"spawn in ask", tool.ClassSpawn, "ask", `{}`, false, ""},
		{"write in ask", tool.ClassWrite, "ask", `{"file_path":"main.go"}`, true, RuleMode},
		{"write in plan", tool.ClassWrite, "plan", `{"file_path":"main.go"}`, true, RuleMode},
		{"plan file in plan", tool.ClassWrite, "plan", `{"file_path":".odin/plans/p1.md"}`, false, ""},
		{"plan file in ask", tool.ClassWrite, "ask", `{"file_path":".odin/plans/p1.md"}`, true, RuleMode},
		{"plan dir escape", tool.ClassWrite, "plan", `{"file_path":".odin/plans/../agents/x.md"}`, true, RuleMode},
		{"write in edit", tool.ClassWrite, "edit", `{"file_path":"main.go"}`, false, ""},
		{"protected write in edit", tool.ClassWrite, "edit", `{"file_path":"gitlink/hooks/pre-commit"}`, true, RuleProtected},
		{"outside write in edit is left to the tool's guard", tool.ClassWrite, "edit", `{"file_path":"/etc/motd"}`, false, ""},
		{"write with unknown mode", tool.ClassWrite, "", `{"file_path":"main.go"}`, true, RuleMode},
		{"read-only command in ask", tool.ClassExecute, "ask", `{"command":"git status"}`, false, ""},
		{"writing command in ask", tool.ClassExecute, "ask", `{"command":"touch x"}`, true, RuleMode},
		{"allowed command in edit", tool.ClassExecute, "edit", `{"command":"go test ./..."}`, false, ""},
		{"unknown command headless", tool.ClassExecute, "edit", `{"command":"make deploy"}`, true, RuleNotApproved},
		{"forbidden command", tool.ClassExecute, "edit", `{"command":"git push origin"}`, true, RuleForbidden},
		{"missing command: left to the tool's validation, nothing runs", tool.ClassExecute, "edit", `{"cmd":"ls"}`, false, ""},
		{"invalid JSON", tool.ClassExecute, "edit", `{"command":`, true, RuleUnresolvable},
		{"unknown class", tool.Class("magic"), "edit", `{}`, true, RuleMode},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := &tool.Env{Root: f.root, Agent: "orchestrator", Mode: c.mode}
			err := p.Authorize(t.Context(), env, tool.Info{Name: "T", Class: c.class}, json.RawMessage(c.input))
			if c.denied != (err != nil) {
				t.Fatalf("Authorize = %v, denied want %v", err, c.denied)
			}
			if err == nil {
				return
			}
			var d *Denial
			if !errors.As(err, &d) || !tool.IsDenied(err) {
				t.Fatalf("error %T %v is not a denial", err, err)
			}
			if d.Rule != c.rule {
				t.Fatalf("rule %q, want %q (%v)", d.Rule, c.rule, err)
			}
		})
	}
}

func TestAuthorizeAppliesAgentWriteFilter(t *testing.T) {
	f := newFixture(t)
	p := newPolicy(t, f, Headless{})
	info := tool.Info{Name: "WriteFile", Class: tool.ClassWrite}
	for _, c := range []struct {
		agent, path string
		denied      bool
	}{
		{"test", "main.go", true},
		{"test", "main_test.go", false},
		{"docs", "docs/guide.md", false},
		{"docs", "main.go", true},
		{"code", "main.go", false},
	} {
		in, _ := json.Marshal(fileInput{c.path})
		err := p.Authorize(t.Context(), &tool.Env{Root: f.root, Agent: c.agent, Mode: "edit"}, info, in)
		if (err != nil) != c.denied {
			t.Errorf("%s writing %s: %v, want denied=%v", c.agent, c.path, err, c.denied)
		}
		var d *Denial
		if err != nil && (!errors.As(err, &d) || d.Rule != RuleAgentFilter || !strings.Contains(err.Error(), "the "+c.agent+" agent may write only")) {
			t.Errorf("%s writing %s: denial %v", c.agent, c.path, err)
		}
	}
}

func TestHeadlessYoloAllowsAsksButNotDenials(t *testing.T) {
	f := newFixture(t)
	p := newPolicy(t, f, Headless{Yolo: true})
	env := &tool.Env{Root: f.root, Agent: "orchestrator", Mode: "edit"}
	info := tool.Info{Name: "ExecuteCommand", Class: tool.ClassExecute}
	for cmd, denied := range map[string]bool{
		"make deploy":                  false,
		"cat /etc/passwd":              false,
		"git push":                     true,
		"echo x > .git/hooks/pre-push": true,
		"cp x .git/hooks/pre-push":     true,
		"touch odin.yaml":              true,
		"sudo make install":            true,
	} {
		in, _ := json.Marshal(cmdInput{cmd})
		err := p.Authorize(t.Context(), env, info, in)
		if denied != (err != nil) {
			t.Errorf("%q: Authorize = %v, want denied=%v", cmd, err, denied)
		}
	}
	env.Mode = "ask"
	in, _ := json.Marshal(cmdInput{"touch x"})
	if err := p.Authorize(t.Context(), env, info, in); !tool.IsDenied(err) {
		t.Errorf("yolo widened ask mode: %v", err)
	}
}

func TestDenialMessagesSayHowToAllow(t *testing.T) {
	f := newFixture(t)
	p := newPolicy(t, f, nil)
	env := &tool.Env{Root: f.root, Agent: "orchestrator", Mode: "edit"}
	info := tool.Info{Name: "ExecuteCommand", Class: tool.ClassExecute}
	cases := map[string][]string{
		"make deploy":      {"not-approved", "--allow", "permissions.allowed_commands", "--yolo"},
		"git push":         {"forbidden", "git push*", "permissions.forbidden_commands"},
		"cat /etc/passwd":  {"outside-root", "--add-dir /etc", "permissions.additional_dirs"},
		"echo > odin.yaml": {"protected-path", "odin.yaml"},
	}
	for cmd, wants := range cases {
		in, _ := json.Marshal(cmdInput{cmd})
		err := p.Authorize(t.Context(), env, info, in)
		if err == nil {
			t.Fatalf("%q allowed", cmd)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: message %q lacks %q", cmd, err, w)
			}
		}
	}
	_, err := p.GuardFor("code", "t1").Resolve(t.Context(), "/etc/passwd", tool.AccessRead)
	for _, w := range []string{"outside-root", "--add-dir /etc", "permissions.additional_dirs"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("guard denial %v lacks %q", err, w)
		}
	}
}

// TestSessionApprovalsAreShared: a command approved for the session by the
// user is not asked again, for any agent of the session; a specialist's
// request reaches the user with its origin.
func TestSessionApprovalsAreShared(t *testing.T) {
	f := newFixture(t)
	bus := events.New("s1", nil)
	sub := bus.Subscribe(t.Context(), 16, true)
	a := NewBusApprover(bus, nil)
	p := newPolicy(t, f, a)
	info := tool.Info{Name: "ExecuteCommand", Class: tool.ClassExecute}
	in, _ := json.Marshal(cmdInput{"make deploy"})

	errc := make(chan error, 1)
	go func() {
		errc <- p.Authorize(t.Context(), &tool.Env{Root: f.root, Agent: "code", AgentID: "t1", Mode: "edit"}, info, in)
	}()
	ev, ok := next(t, sub).(messages.ApprovalRequested)
	if !ok || ev.Agent != "code" || ev.TaskID != "t1" || ev.Subject != "make deploy" || !strings.Contains(ev.Reason, "allowed_commands") {
		t.Fatalf("request %+v", ev)
	}
	if err := a.Answer(ev.ID, AllowSession); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("approved call denied: %v", err)
	}
	next(t, sub) // resolution
	// Another agent, same subject: no new request.
	if err := p.Authorize(t.Context(), &tool.Env{Root: f.root, Agent: "qa", AgentID: "t2", Mode: "edit"}, info, in); err != nil {
		t.Fatalf("remembered approval not applied: %v", err)
	}
	select {
	case env := <-sub:
		t.Fatalf("unexpected event %#v", env.Event)
	default:
	}
	// The user denies another command.
	in2, _ := json.Marshal(cmdInput{"make clean"})
	go func() {
		errc <- p.Authorize(t.Context(), &tool.Env{Root: f.root, Agent: "orchestrator", Mode: "edit"}, info, in2)
	}()
	ev = next(t, sub).(messages.ApprovalRequested)
	if err := a.Answer(ev.ID, Reject); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !tool.IsDenied(err) {
		t.Fatalf("denied call: %v", err)
	}
}

func TestGuardResolveAsksAndRemembers(t *testing.T) {
	f := newFixture(t)
	inner := &recorder{answer: AllowSession}
	p := newPolicy(t, f, inner)
	outside := filepath.Join(f.evil, "secret")
	for _, agent := range []string{"orchestrator", "search"} {
		got, err := p.GuardFor(agent, "").Resolve(t.Context(), outside, tool.AccessRead)
		if err != nil || got != outside {
			t.Fatalf("%s: Resolve = %q, %v", agent, got, err)
		}
	}
	if n := len(inner.asked()); n != 1 {
		t.Fatalf("asked %d times, want 1", n)
	}
	// A read approval does not grant writes.
	if _, err := p.Guard().Resolve(t.Context(), outside, tool.AccessWrite); err != nil {
		t.Fatal(err)
	}
	if n := len(inner.asked()); n != 2 {
		t.Fatalf("asked %d times, want 2", n)
	}
	// Protected paths are never asked about.
	if _, err := p.Guard().Resolve(t.Context(), "gitlink/hooks/x", tool.AccessWrite); !tool.IsDenied(err) {
		t.Fatalf("write into .git via symlink: %v", err)
	}
	if n := len(inner.asked()); n != 2 {
		t.Fatalf("asked about a protected path")
	}
	// Malformed paths are plain errors, not denials.
	for _, bad := range []string{"", "~/x", "a\x00b"} {
		if _, err := p.Guard().Resolve(t.Context(), bad, tool.AccessRead); err == nil || tool.IsDenied(err) {
			t.Errorf("Resolve(%q) = %v, want a non-denial error", bad, err)
		}
	}
}

func TestNewGuardErrors(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		root string
		opts GuardOptions
	}{
		{"relative/root", GuardOptions{}},
		{filepath.Join(root, "missing"), GuardOptions{}},
		{root, GuardOptions{AdditionalDirs: []string{""}}},
		{root, GuardOptions{AdditionalDirs: []string{"~/code"}}},
	}
	for _, c := range cases {
		if _, err := NewGuard(c.root, c.opts); err == nil {
			t.Errorf("NewGuard(%q, %+v) succeeded", c.root, c.opts)
		}
	}
}

// TestWithPermissionEndToEnd runs tools through tools.WithPermission with
// the real policy: denied calls never reach the tool.
func TestWithPermissionEndToEnd(t *testing.T) {
	f := newFixture(t)
	p := newPolicy(t, f, Headless{})
	var execRuns, writeRuns atomic.Int32
	set := tools.NewSet(counted("ExecuteCommand", tool.ClassExecute, &execRuns), counted("WriteFile", tool.ClassWrite, &writeRuns)).
		Map(tools.WithPermission(p))
	env := &tool.Env{Root: f.root, Agent: "orchestrator", Mode: "ask"}
	res, err := set.Run(t.Context(), env, "ExecuteCommand", json.RawMessage(`{"command":"rm -rf x"}`))
	if err != nil || !res.Denied || !res.IsError || !strings.Contains(res.Output, "read-only") {
		t.Fatalf("denied exec: %+v, %v", res, err)
	}
	res, err = set.Run(t.Context(), env, "WriteFile", json.RawMessage(`{"file_path":"main.go"}`))
	if err != nil || !res.Denied {
		t.Fatalf("denied write: %+v, %v", res, err)
	}
	res, err = set.Run(t.Context(), env, "ExecuteCommand", json.RawMessage(`{"command":"ls"}`))
	if err != nil || res.IsError || res.Output != "ran ls" {
		t.Fatalf("allowed exec: %+v, %v", res, err)
	}
	if execRuns.Load() != 1 || writeRuns.Load() != 0 {
		t.Fatalf("runs: exec %d write %d", execRuns.Load(), writeRuns.Load())
	}
}

func next(t *testing.T, sub <-chan messages.Envelope) messages.Event {
	t.Helper()
	select {
	case env := <-sub:
		return env.Event
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return nil
}

package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/tools/tool"
)

func newHooks(t *testing.T, root string, hooks map[string][]config.Hook) *Hooks {
	t.Helper()
	h, err := New(hooks, Options{Root: root, SessionID: "sess-1"})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHookExitCodes(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(root, "second-ran")
	second := config.Hook{Command: "touch " + marker}
	cases := []struct {
		name       string
		event      string
		first      string
		want       Result
		secondRuns bool
	}{
		{"exit 0 adds context", UserPromptSubmit, "echo 'branch: main'", Result{Context: "branch: main"}, true},
		{"exit 0 output of PreToolUse stays out of context", PreToolUse, "echo noise", Result{}, true},
		{"exit 2 blocks with stderr", PreToolUse, "echo 'do not touch prod' >&2; exit 2", Result{Blocked: true, Feedback: "do not touch prod"}, false},
		{"exit 2 without message", Stop, "exit 2", Result{Blocked: true, Feedback: `hook "exit 2" exited 2 without a message`}, false},
		{"other code warns", SubagentStop, "echo oops >&2; exit 7", Result{Warnings: []string{`SubagentStop hook "echo oops >&2; exit 7" exited with status 7: oops`}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(marker)
			h := newHooks(t, root, map[string][]config.Hook{c.event: {{Command: c.first}, second}})
			got := h.Run(t.Context(), Input{Event: c.event, ToolName: "ExecuteCommand", Agent: "code"})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			_, err := os.Stat(marker)
			if ran := err == nil; ran != c.secondRuns {
				t.Errorf("second hook ran=%v, want %v", ran, c.secondRuns)
			}
		})
	}
}

func TestHookShellMissingWarns(t *testing.T) {
	h, err := New(map[string][]config.Hook{PreCompact: {{Command: "true"}}}, Options{Root: t.TempDir(), Shell: "/nonexistent/shell"})
	if err != nil {
		t.Fatal(err)
	}
	got := h.Run(t.Context(), Input{Event: PreCompact, Trigger: "auto"})
	if got.Blocked || len(got.Warnings) != 1 || !strings.HasPrefix(got.Warnings[0], `PreCompact hook "true" could not run:`) {
		t.Fatalf("result %+v", got)
	}
}

func TestHookStdinAndEnvironment(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "event.json")
	envOut := filepath.Join(root, "env.txt")
	h := newHooks(t, root, map[string][]config.Hook{PostToolUse: {{
		Matcher: "ExecuteCommand",
		Command: `cat > event.json; printf '%s\n' "$ODIN_HOOK_EVENT" "$ODIN_SESSION_ID" "$ODIN_PROJECT_DIR" "$PWD" > env.txt`,
	}}})
	env := &tool.Env{Root: root, Agent: "qa", AgentID: "t9", SessionID: "sess-9", Mode: "edit"}
	v := h.PostToolUse(t.Context(), env, tool.Info{Name: "ExecuteCommand"}, json.RawMessage(`{"command":"go vet ./..."}`),
		tool.Result{Output: "ok", Files: []string{"/x"}})
	if v.Block || len(v.Warnings) > 0 {
		t.Fatalf("verdict %+v", v)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("stdin is not JSON: %v\n%s", err, data)
	}
	want := map[string]any{
		"session_id":      "sess-9",
		"hook_event_name": "PostToolUse",
		"cwd":             root,
		"agent":           "qa",
		"task_id":         "t9",
		"tool_name":       "ExecuteCommand",
		"tool_input":      map[string]any{"command": "go vet ./..."},
		"tool_result":     map[string]any{"output": "ok", "is_error": false, "files": []any{"/x"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stdin (-want +got):\n%s", diff)
	}
	envData, err := os.ReadFile(envOut)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"PostToolUse", "sess-9", root, root}, strings.Fields(string(envData))); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
}

func TestHookMatchers(t *testing.T) {
	root := t.TempDir()
	h := newHooks(t, root, map[string][]config.Hook{
		PreToolUse: {
			{Matcher: "WriteFile|EditTool", Command: "echo write >&2; exit 2"},
			{Matcher: "*", Command: "echo any >> log"},
		},
		SubagentStart:    {{Matcher: "review", Command: "echo 'review: be strict'"}},
		UserPromptSubmit: {{Matcher: "ignored-for-prompts", Command: "echo ctx"}},
	})
	cases := []struct {
		in      Input
		blocked bool
		context string
	}{
		{Input{Event: PreToolUse, ToolName: "EditTool"}, true, ""},
		{Input{Event: PreToolUse, ToolName: "ReadFile"}, false, ""},
		{Input{Event: PreToolUse, ToolName: "WriteFileX"}, false, ""},
		{Input{Event: SubagentStart, Agent: "review"}, false, "review: be strict"},
		{Input{Event: SubagentStart, Agent: "code"}, false, ""},
		{Input{Event: UserPromptSubmit, Prompt: "hi"}, false, "ctx"},
	}
	for _, c := range cases {
		got := h.Run(t.Context(), c.in)
		if got.Blocked != c.blocked || got.Context != c.context {
			t.Errorf("%s %s%s: %+v", c.in.Event, c.in.ToolName, c.in.Agent, got)
		}
	}
	data, _ := os.ReadFile(filepath.Join(root, "log"))
	if n := strings.Count(string(data), "any"); n != 2 { // ReadFile and WriteFileX
		t.Errorf("catch-all hook ran %d times, want 2", n)
	}
}

func TestHookTimeoutKillsProcessGroup(t *testing.T) {
	root := t.TempDir()
	h := newHooks(t, root, map[string][]config.Hook{Stop: {{
		Command: "sleep 60 & echo $! > child.pid; wait",
		Timeout: 500 * time.Millisecond,
	}}})
	got := h.Run(t.Context(), Input{Event: Stop})
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "timed out after 500ms and was killed") || got.Blocked {
		t.Fatalf("result %+v", got)
	}
	data, err := os.ReadFile(filepath.Join(root, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the hook's background child %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie waiting for a reaper is dead).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

func TestHookCancelledContext(t *testing.T) {
	root := t.TempDir()
	h := newHooks(t, root, map[string][]config.Hook{Stop: {{Command: "sleep 60"}, {Command: "touch second"}}})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	got := h.Run(ctx, Input{Event: Stop})
	if got.Blocked || len(got.Warnings) != 0 {
		t.Errorf("result %+v", got)
	}
	if _, err := os.Stat(filepath.Join(root, "second")); err == nil {
		t.Error("a hook ran after cancellation")
	}
}

func TestNewHooksValidates(t *testing.T) {
	_, err := New(map[string][]config.Hook{
		"PreToolUse":  {{Command: " "}, {Command: "x", Timeout: -time.Second}},
		"OnSomething": {{Command: "x"}},
	}, Options{})
	if err == nil {
		t.Fatal("invalid hooks accepted")
	}
	for _, want := range []string{"hooks.OnSomething: unknown event", "hooks.PreToolUse[0].command: empty", "hooks.PreToolUse[1].timeout: negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	var nilHooks *Hooks
	if got := nilHooks.Run(t.Context(), Input{Event: Stop}); got.Blocked {
		t.Error("nil Hooks blocked")
	}
}

// TestHookCheckRefuses: a hook whose Check fails (its pinned script
// changed) does not run, the failure is its warning, and the next hook of
// the event still runs.
func TestHookCheckRefuses(t *testing.T) {
	root := t.TempDir()
	hooks := map[string][]config.Hook{Stop: {{Command: "touch canary"}, {Command: "touch ok"}}}
	h, err := New(hooks, Options{Root: root, Check: func(event string, hk config.Hook) error {
		if event == Stop && hk.Command == "touch canary" {
			return errors.New("canary.sh changed since `odin trust`")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	res := h.Run(t.Context(), Input{Event: Stop})
	if _, err := os.Stat(filepath.Join(root, "canary")); err == nil {
		t.Error("a refused hook ran")
	}
	if _, err := os.Stat(filepath.Join(root, "ok")); err != nil {
		t.Error("the next hook did not run")
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "changed since `odin trust`") {
		t.Errorf("warnings = %q", res.Warnings)
	}
}

// TestHookCommandAlias: a hook whose matcher names ExecuteCommand also
// runs for ShellSession and Python calls (and for no other tool), with the
// tool's real name and input; one written for Claude Code's Bash sees
// ShellSession as Bash; the shell's directory reaches it as command_dir.
func TestHookCommandAlias(t *testing.T) {
	root := t.TempDir()
	h := newHooks(t, root, map[string][]config.Hook{
		PreToolUse: {
			{Matcher: "ExecuteCommand", Command: "cat >> events; echo >> events; exit 2"},
			{Matcher: "Bash", Command: "echo never >> events"},
		},
		PostToolUse: {{Matcher: "ExecuteCommand", Command: "cat >> events; echo >> events", ToolNames: map[string]string{"ExecuteCommand": "Bash"}}},
	})
	env := &tool.Env{Root: root, SessionID: "s", Agent: "code"}
	cases := []struct {
		tool    string
		blocked bool
	}{{"ShellSession", true}, {"Python", true}, {"ExecuteCommand", true}, {"ReadFile", false}, {"ShellSessionX", false}}
	for _, c := range cases {
		ctx := t.Context()
		if c.tool == "ShellSession" {
			ctx = tool.WithWorkDir(ctx, "/proj/sub")
		}
		got := h.PreToolUse(ctx, env, tool.Info{Name: c.tool}, json.RawMessage(`{"command":"touch x"}`))
		if got.Block != c.blocked {
			t.Errorf("PreToolUse %s: blocked %v, want %v", c.tool, got.Block, c.blocked)
		}
	}
	for _, name := range []string{"ShellSession", "Python"} {
		h.PostToolUse(t.Context(), env, tool.Info{Name: name}, json.RawMessage(`{"command":"touch x"}`), tool.Result{Output: "ok"})
	}
	data, err := os.ReadFile(filepath.Join(root, "events"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var in Input
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, in.Event+" "+in.ToolName+" "+string(in.ToolInput)+" "+in.CommandDir)
	}
	want := []string{
		`PreToolUse ShellSession {"command":"touch x"} /proj/sub`,
		`PreToolUse Python {"command":"touch x"} `,
		`PreToolUse ExecuteCommand {"command":"touch x"} `,
		`PostToolUse Bash {"command":"touch x"} `,
		`PostToolUse Python {"command":"touch x"} `,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events the hooks saw (-want +got):\n%s", d)
	}
}

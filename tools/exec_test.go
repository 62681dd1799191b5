package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/tools/tool"
)

func runCommand(t *testing.T, opts ExecuteCommandOptions, env *tool.Env, in ExecuteCommandInput) (tool.Result, CommandOutcome) {
	t.Helper()
	res := runTool(t, NewExecuteCommand(opts), env, in)
	oc, ok := res.Meta.(CommandOutcome)
	if !ok && !res.IsError {
		t.Fatalf("Meta is %T", res.Meta)
	}
	return res, oc
}

func TestExecuteCommand(t *testing.T) {
	env := newRootEnv(t)
	tests := []struct {
		name     string
		command  string
		want     string
		exitCode int
	}{
		{"stdout", "echo hello", "hello\nExit code: 0", 0},
		{"stdout and stderr combined, non-zero exit", "echo out; echo err >&2; exit 3", "out\nerr\nExit code: 3", 3},
		{"runs in the project root", "pwd", env.Root + "\nExit code: 0", 0},
		{"environment", `echo "$ODIN $PAGER $GIT_PAGER $NO_COLOR $TERM"`, "1 cat cat 1 dumb\nExit code: 0", 0},
		{"stdin is /dev/null", "cat; echo done", "done\nExit code: 0", 0},
		{"no output", "true", "(no output)\nExit code: 0", 0},
		{"no final newline", "printf abc", "abc\nExit code: 0", 0},
		{"killed by a signal", "kill -KILL $$", "(no output)\n(terminated by signal killed)\nExit code: 137", 137},
		{"bash syntax", "for i in 1 2; do echo $i; done | tr '\\n' ,", "1,2,\nExit code: 0", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, oc := runCommand(t, ExecuteCommandOptions{}, env, ExecuteCommandInput{Command: tt.command, Description: tt.name})
			if res.IsError {
				t.Errorf("a finished command is not an error result: %+v", res)
			}
			if d := cmp.Diff(tt.want, res.Output); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
			if oc.ExitCode != tt.exitCode || oc.TimedOut || oc.Cancelled {
				t.Errorf("outcome = %+v, want exit code %d", oc, tt.exitCode)
			}
		})
	}
}

func TestExecuteCommandBadInput(t *testing.T) {
	env := newRootEnv(t)
	for _, raw := range []string{`{"command":""}`, `{"command":"   "}`, `{}`, `{"command":"ls","timeout":-5}`, `{"command":"ls","timeout":"1s"}`} {
		res, err := NewExecuteCommand(ExecuteCommandOptions{}).Run(t.Context(), env, []byte(raw))
		if err != nil || !res.IsError {
			t.Errorf("%s: %+v, %v; want an error result", raw, res, err)
		}
	}
	if _, err := NewExecuteCommand(ExecuteCommandOptions{}).Run(t.Context(), &tool.Env{}, []byte(`{"command":"ls"}`)); err == nil {
		t.Error("no Go error for an Env without a root")
	}
}

func TestExecuteCommandOutputCap(t *testing.T) {
	env := newRootEnv(t)
	var full strings.Builder
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&full, "%d\n", i)
	}
	res, oc := runCommand(t, ExecuteCommandOptions{MaxOutput: 1000}, env, ExecuteCommandInput{Command: "seq 1 10000"})
	if res.IsError || oc.ExitCode != 0 {
		t.Fatalf("result = %+v", res)
	}
	if !strings.HasPrefix(oc.Output, "1\n2\n3\n") || !strings.HasSuffix(oc.Output, "9999\n10000\n") {
		t.Errorf("head or tail lost:\n%s", oc.Output)
	}
	note := fmt.Sprintf("\n… %d bytes truncated …\n", oc.TruncatedBytes)
	if !strings.Contains(oc.Output, note) {
		t.Errorf("no truncation note %q in:\n%s", note, oc.Output)
	}
	if kept := len(oc.Output) - len(note); kept > 1000 || int64(kept)+oc.TruncatedBytes != int64(full.Len()) {
		t.Errorf("kept %d bytes + dropped %d != %d total (cap 1000)", kept, oc.TruncatedBytes, full.Len())
	}
	if !strings.HasSuffix(res.Output, "Exit code: 0") {
		t.Errorf("exit code missing from a truncated result")
	}
}

func TestHeadTailKeepsUTF8(t *testing.T) {
	h := newHeadTail(10)
	h.Write([]byte(strings.Repeat("é", 20))) // 40 bytes of two-byte runes
	s, dropped := h.String()
	if !utf8.ValidString(s) || strings.Contains(s, "\uFFFD") {
		t.Errorf("cut inside a rune: %q", s)
	}
	if want := "éé\n… 32 bytes truncated …\néé"; s != want || dropped != 32 {
		t.Errorf("got %q (%d dropped), want %q", s, dropped, want)
	}
	h = newHeadTail(100)
	h.Write([]byte("ok \xff\xfe"))
	if s, _ := h.String(); s != "ok \uFFFD" {
		t.Errorf("invalid bytes: %q", s)
	}
}

// groupMembers lists live (non-zombie) processes in process group pgid.
func groupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var live []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[0] == "Z" || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		live = append(live, e.Name()+" "+s[strings.IndexByte(s, '(')+1:strings.LastIndexByte(s, ')')])
	}
	return live
}

// assertGroupGone waits (bounded) for every process of the group recorded
// in pgidFile to be gone.
func assertGroupGone(t *testing.T, pgidFile string) {
	t.Helper()
	data, err := os.ReadFile(pgidFile)
	if err != nil {
		t.Fatalf("the command did not record its process group: %v", err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for range 100 {
		if live = groupMembers(t, pgid); len(live) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range live {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Errorf("processes of group %d still running: %v", pgid, live)
}

func TestExecuteCommandTimeoutKillsTheGroup(t *testing.T) {
	tests := []struct {
		name    string
		command string
	}{
		{"grandchildren", "echo $$ > pgid; echo started; (sleep 101; echo never) & sleep 102 & wait"},
		{"processes ignoring SIGTERM", "trap '' TERM; echo $$ > pgid; echo started; sleep 103 & sleep 104; echo never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newRootEnv(t)
			opts := ExecuteCommandOptions{KillGrace: 200 * time.Millisecond}
			res, oc := runCommand(t, opts, env, ExecuteCommandInput{Command: tt.command, Timeout: 500})
			if !res.IsError || !oc.TimedOut || oc.Cancelled {
				t.Errorf("result = %+v; want a timeout", res)
			}
			if !strings.Contains(res.Output, "timed out after 500ms") || !strings.Contains(res.Output, "started") || strings.Contains(res.Output, "never") {
				t.Errorf("output:\n%s", res.Output)
			}
			assertGroupGone(t, filepath.Join(env.Root, "pgid"))
		})
	}
}

func TestExecuteCommandCancel(t *testing.T) {
	env := newRootEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan tool.Result, 1)
	go func() {
		res, err := NewExecuteCommand(ExecuteCommandOptions{KillGrace: 200 * time.Millisecond}).Run(ctx, env,
			mustJSON(t, ExecuteCommandInput{Command: "sleep 105 & echo $$ > pgid.tmp; mv pgid.tmp pgid; wait"}))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(env.Root, "pgid")); err == nil {
			break
		}
		if i == 1000 {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	res := <-done
	oc, _ := res.Meta.(CommandOutcome)
	if !res.IsError || !oc.Cancelled || oc.TimedOut || !strings.Contains(res.Output, "cancelled") {
		t.Errorf("result = %+v", res)
	}
	assertGroupGone(t, filepath.Join(env.Root, "pgid"))
}

func TestExecuteCommandBackgroundJobs(t *testing.T) {
	env := newRootEnv(t)
	// A background job holding the output open does not stall the call
	// (it would otherwise last 106s and time out) and is stopped.
	res, oc := runCommand(t, ExecuteCommandOptions{KillGrace: 200 * time.Millisecond}, env,
		ExecuteCommandInput{Command: "echo $$ > pgid; sleep 106 & echo started", Timeout: 30000})
	if res.IsError || oc.TimedOut || oc.ExitCode != 0 || !strings.HasPrefix(res.Output, "started\n") {
		t.Errorf("result = %+v", res)
	}
	assertGroupGone(t, filepath.Join(env.Root, "pgid"))

	// One that redirects its output and leaves the session is stopped
	// too: nothing a command starts outlives it.
	res, _ = runCommand(t, ExecuteCommandOptions{Launcher: sandbox.New(sandbox.Options{Mode: sandbox.ModeOff, Root: env.Root})}, env,
		ExecuteCommandInput{Command: "setsid sleep 107 > /dev/null 2>&1 & echo $!", Timeout: 30000})
	pid, err := strconv.Atoi(strings.SplitN(res.Output, "\n", 2)[0])
	if err != nil {
		t.Fatalf("output %q", res.Output)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if err := syscall.Kill(pid, 0); err == nil {
		if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(st), ") Z ") {
			t.Errorf("the setsid background job outlived the command")
		}
	}
}

func TestExecuteCommandTimeoutClamped(t *testing.T) {
	env := newRootEnv(t)
	res, oc := runCommand(t, ExecuteCommandOptions{MaxTimeout: 300 * time.Millisecond, KillGrace: 100 * time.Millisecond}, env,
		ExecuteCommandInput{Command: "sleep 108", Timeout: 999999})
	if !oc.TimedOut || !strings.Contains(res.Output, "timeout 999999ms exceeds the maximum; used 300ms") {
		t.Errorf("result = %+v", res)
	}
	schema := string(NewExecuteCommand(ExecuteCommandOptions{MaxTimeout: time.Minute}).Info().Schema)
	if !strings.Contains(schema, "(default 60000, max 60000)") {
		t.Errorf("schema does not state the configured limits: %s", schema)
	}
}

func BenchmarkExecuteCommand(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	env := &tool.Env{Root: root}
	tool := NewExecuteCommand(ExecuteCommandOptions{})
	in := []byte(`{"command":"echo hi"}`)
	for b.Loop() {
		if res, err := tool.Run(b.Context(), env, in); err != nil || res.IsError {
			b.Fatal(res.Output, err)
		}
	}
}

// TestExecuteCommandSandbox: every sandbox available here keeps writes in
// the project (and out of .git), keeps ask mode from writing at all and
// keeps the provider key from the command; a refused write says why.
func TestExecuteCommandSandbox(t *testing.T) {
	for _, mode := range []sandbox.Mode{sandbox.ModeBubblewrap, sandbox.ModeLandlock} {
		t.Run(string(mode), func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			outside, err := os.MkdirTemp("/var/tmp", "odin-exec-canary-")
			if err != nil {
				t.Skip("no /var/tmp for the canary")
			}
			defer os.RemoveAll(outside)
			t.Setenv("OPENAI_API_KEY", "sk-exec-canary-123456")
			l := sandbox.New(sandbox.Options{Mode: mode, Root: root})
			if st := l.Status(); st.Refuse {
				t.Skipf("%s unavailable: %s", mode, st)
			}
			tl := NewExecuteCommand(ExecuteCommandOptions{Launcher: l})
			env := &tool.Env{Root: root, Mode: "edit"}
			if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			res, err := tl.Run(t.Context(), env, mustJSON(t, map[string]any{
				"command": fmt.Sprintf("touch sub/in; echo key=$OPENAI_API_KEY; touch %s/canary; touch .git/config", outside),
			}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(root, "sub", "in")); err != nil {
				t.Errorf("write inside the project was refused: %v\n%s", err, res.Output)
			}
			for _, f := range []string{filepath.Join(outside, "canary"), filepath.Join(root, ".git", "config")} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%s was created:\n%s", f, res.Output)
				}
			}
			if strings.Contains(res.Output, "sk-exec-canary") {
				t.Errorf("the provider key reached the command:\n%s", res.Output)
			}
			if !strings.Contains(res.Output, "Odin's sandbox") {
				t.Errorf("a refused write does not explain the sandbox:\n%s", res.Output)
			}
			res, _ = tl.Run(t.Context(), &tool.Env{Root: root, Mode: "ask"}, mustJSON(t, map[string]any{"command": "touch sub/ask"}))
			if _, err := os.Stat(filepath.Join(root, "sub", "ask")); err == nil {
				t.Errorf("ask mode wrote in the project:\n%s", res.Output)
			}
		})
	}
}

// TestExecuteCommandHugeTimeout: a timeout too large for a Duration is
// clamped to the maximum, not overflowed into a negative one.
func TestExecuteCommandHugeTimeout(t *testing.T) {
	tl := NewExecuteCommand(ExecuteCommandOptions{})
	res, err := tl.Run(t.Context(), &tool.Env{Root: t.TempDir()}, mustJSON(t, map[string]any{"command": "echo hi", "timeout": 9007199254740991}))
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, res.Output)
	}
	if !strings.Contains(res.Output, "exceeds the maximum; used 600000ms") || !strings.Contains(res.Output, "Exit code: 0") {
		t.Errorf("output:\n%s", res.Output)
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/config"
)

// TestMain lets the test binary be a stdio MCP server (a real child
// process for the launch tests).
func TestMain(m *testing.M) {
	switch os.Getenv("ODIN_MCP_TEST_SERVER") {
	case "fail":
		fmt.Fprintln(os.Stderr, "fatal: GITHUB_TOKEN is not set")
		os.Exit(1)
	case "1":
		fmt.Fprintln(os.Stderr, "child: listening on stdio \x1b[31mred\x1b[0m")
		s := sdk.NewServer(&sdk.Implementation{Name: "child", Version: "1"}, nil)
		sdk.AddTool(s, &sdk.Tool{Name: "shout", Description: "Write to stderr."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "child: shouted")
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
			})
		sdk.AddTool(s, &sdk.Tool{Name: "die", Description: "Exit."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				os.Exit(3)
				return nil, nil, nil
			})
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// directLaunch starts the test binary as a server without a sandbox:
// these tests are about the Manager's bookkeeping of processes, not their
// confinement (TestNoLauncherRefusesStdio is; odin's launcher is the
// session's sandbox). Only tests may start a server this way.
func directLaunch(_ context.Context, _ string, argv []string, env []string, dir string) (*exec.Cmd, func(), error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	return cmd, nil, nil
}

// releases is a Launcher around directLaunch that counts releases and
// checks that each comes after the command was waited for.
type releases struct {
	n, early atomic.Int32
	ch       chan struct{}
}

func (r *releases) launch(ctx context.Context, server string, argv, env []string, dir string) (*exec.Cmd, func(), error) {
	cmd, _, err := directLaunch(ctx, server, argv, append(env, "ODIN_MCP_TEST_SERVER=1"), dir)
	if err != nil {
		return nil, nil, err
	}
	return cmd, func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			r.early.Add(1) // released while the process may still run
		}
		r.n.Add(1)
		r.ch <- struct{}{}
	}, nil
}

func (r *releases) await(t *testing.T, what string) {
	t.Helper()
	select {
	case <-r.ch:
	case <-time.After(time.Minute): // a bound on a hang, not a speed test
		t.Fatalf("no release after %s", what)
	}
}

// TestReleaseAfterEveryExit: the launcher's release runs once per started
// process, after the SDK waited for it, whether the server exits by itself
// (then it is restarted) or the Manager closes it; and at once for a
// command that cannot start.
func TestReleaseAfterEveryExit(t *testing.T) {
	r := &releases{ch: make(chan struct{}, 16)}
	m := New(Options{Servers: map[string]config.MCPServer{"fx": {Command: os.Args[0]}}, Launch: r.launch,
		BackoffMin: time.Millisecond, Dir: t.TempDir()})
	m.Start()
	m.WaitReady(t.Context(), 30*time.Second)
	die := find(t, m.Tools(), "mcp__fx__die")
	_, _ = die.Run(t.Context(), nil, json.RawMessage(`{}`))
	r.await(t, "the server exited")
	for m.Status()[0].Restarts < 1 || m.Status()[0].State != StateReady {
		time.Sleep(time.Millisecond)
	}
	if err := m.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	r.await(t, "Close")
	if n, early := r.n.Load(), r.early.Load(); n != 2 || early != 0 {
		t.Errorf("releases = %d (early %d), want 2 after the wait", n, early)
	}

	missing := &releases{ch: make(chan struct{}, 16)}
	m = New(Options{Servers: map[string]config.MCPServer{"fx": {Command: "/nonexistent/odin-mcp-server"}}, Launch: missing.launch,
		MaxRestarts: 2, BackoffMin: time.Millisecond})
	defer m.Close()
	m.Start()
	for m.Status()[0].State != StateFailed {
		time.Sleep(time.Millisecond)
	}
	if n := missing.n.Load(); n != 2 {
		t.Errorf("releases for a command that never started = %d, want 2", n)
	}
}

// TestStderrIsKept: a stdio server's stderr is kept, raw, in a bounded
// tail (Status) and in NAME.log under LogDir; a server that fails to start
// has its last stderr line in the failure report.
func TestStderrIsKept(t *testing.T) {
	logs := t.TempDir()
	r := &releases{ch: make(chan struct{}, 16)}
	m := New(Options{Servers: map[string]config.MCPServer{"fx": {Command: os.Args[0]}}, Launch: r.launch,
		BackoffMin: time.Millisecond, Dir: t.TempDir(), LogDir: logs})
	defer m.Close()
	m.Start()
	m.WaitReady(t.Context(), 30*time.Second)
	if _, err := find(t, m.Tools(), "mcp__fx__shout").Run(t.Context(), nil, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	want := []string{"child: listening on stdio \x1b[31mred\x1b[0m", "child: shouted"}
	for !slices.Equal(m.Status()[0].Stderr, want) {
		// The copy from the pipe may trail the call's answer.
		time.Sleep(time.Millisecond)
	}
	st := m.Status()[0]
	if st.Log != filepath.Join(logs, "fx.log") {
		t.Errorf("log = %q", st.Log)
	}
	data, err := os.ReadFile(st.Log)
	if err != nil || string(data) != strings.Join(want, "\n")+"\n" {
		t.Errorf("log file = %q, %v", data, err)
	}

	var reported []string
	failing := func(ctx context.Context, server string, argv, env []string, dir string) (*exec.Cmd, func(), error) {
		return directLaunch(ctx, server, argv, append(env, "ODIN_MCP_TEST_SERVER=fail"), dir)
	}
	f := New(Options{Servers: map[string]config.MCPServer{"gh": {Command: os.Args[0]}}, Launch: failing,
		MaxRestarts: 1, BackoffMin: time.Millisecond, Report: func(_ string, err error) { reported = append(reported, err.Error()) }})
	defer f.Close()
	f.Start()
	for f.Status()[0].State != StateFailed {
		time.Sleep(time.Millisecond)
	}
	if len(reported) != 1 || !strings.Contains(reported[0], "fatal: GITHUB_TOKEN is not set") {
		t.Errorf("reported = %q, want the server's stderr in it", reported)
	}
}

// TestNoLauncherRefusesStdio is the attack "get a stdio server run as a
// plain child process": a Manager built without a Launch refuses the
// server, as a configuration error (no retries), and the canary file the
// server would write does not appear.
func TestNoLauncherRefusesStdio(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	canary := filepath.Join(t.TempDir(), "canary")
	var reported []error
	m := New(Options{Servers: map[string]config.MCPServer{"x": {Command: sh, Args: []string{"-c", "echo escaped > " + canary}}},
		MaxRestarts: 3, BackoffMin: time.Millisecond, Report: func(_ string, err error) { reported = append(reported, err) }})
	defer m.Close()
	m.Start()
	for m.Status()[0].State != StateFailed {
		time.Sleep(time.Millisecond)
	}
	if len(reported) != 1 || !errors.Is(reported[0], ErrNoLauncher) || !errors.Is(reported[0], ErrConfig) {
		t.Errorf("reported = %v, want one ErrNoLauncher refusal", reported)
	}
	if st := m.Status()[0]; st.Restarts != 0 {
		t.Errorf("the refused server was retried %d times", st.Restarts)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("the server ran: the canary was written")
	}
}

func TestStderrLogBounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l := &stderrLog{path: path}
	line := strings.Repeat("y", 999) + "\n"
	for range 1100 { // 1.1 MB
		_, _ = l.Write([]byte(line))
	}
	l.close()
	if len(l.tail) > stderrTail {
		t.Errorf("tail = %d bytes, over %d", len(l.tail), stderrTail)
	}
	if got := l.lines(3); len(got) != 3 || got[2] != line[:999] {
		t.Errorf("lines = %d", len(got))
	}
	cur, err1 := os.Stat(path)
	old, err2 := os.Stat(path + ".1")
	if err1 != nil || err2 != nil || cur.Size() > stderrFileMax || old.Size() > stderrFileMax || cur.Size()+old.Size() != int64(1100*len(line)) {
		t.Errorf("rotation: %v %v %v %v", cur, old, err1, err2)
	}
}

// TestServerLookup: a server's ${VAR}s (command line, env) expand from
// its own lookup when ServerLookup gives one, from LookupEnv otherwise.
func TestServerLookup(t *testing.T) {
	got := make(chan []string, 2)
	launch := func(ctx context.Context, server string, argv, env []string, dir string) (*exec.Cmd, func(), error) {
		got <- append(append([]string{server}, argv[1:]...), env...)
		return nil, nil, fmt.Errorf("not started")
	}
	env := func(k string) (string, bool) { return map[string]string{"SECRET_KEY": "sk-1"}[k], k == "SECRET_KEY" }
	m := New(Options{Servers: map[string]config.MCPServer{
		"proj": {Command: "x", Args: []string{"--k=${SECRET_KEY}"}, Env: map[string]string{"K": "${SECRET_KEY}"}},
		"user": {Command: "x", Args: []string{"--k=${SECRET_KEY}"}},
	}, LookupEnv: env, Launch: launch, MaxRestarts: 1,
		ServerLookup: func(server string) func(string) (string, bool) {
			if server != "proj" {
				return nil
			}
			return func(string) (string, bool) { return "", false }
		}})
	defer m.Close()
	m.Start()
	seen := map[string][]string{}
	for range 2 {
		l := <-got
		seen[l[0]] = l[1:]
	}
	if !slices.Contains(seen["proj"], "--k=") || !slices.Contains(seen["proj"], "K=") {
		t.Errorf("proj launched with %q, want the secret unexpanded", seen["proj"])
	}
	if !slices.Contains(seen["user"], "--k=sk-1") {
		t.Errorf("user launched with %q, want the variable expanded", seen["user"])
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/config"
)

// TestMain lets the test binary be a stdio MCP server (a real child
// process for the launch tests).
func TestMain(m *testing.M) {
	if os.Getenv("ODIN_MCP_TEST_SERVER") == "1" {
		s := sdk.NewServer(&sdk.Implementation{Name: "child", Version: "1"}, nil)
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

// releases is a Launcher around PlainLaunch that counts releases and
// checks that each comes after the command was waited for.
type releases struct {
	n, early atomic.Int32
	ch       chan struct{}
}

func (r *releases) launch(ctx context.Context, server string, argv, env []string, dir string) (*exec.Cmd, func(), error) {
	cmd, _, err := PlainLaunch(ctx, server, argv, append(env, "ODIN_MCP_TEST_SERVER=1"), dir)
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

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/tools/tool"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

// fixture is an in-process MCP server reached through in-memory
// transports; every connection gets a fresh server session, so a "crash"
// (closing the server side) can be followed by a restart.
type fixture struct {
	srv      *sdk.Server
	mu       sync.Mutex
	sessions []*sdk.ServerSession
	connects atomic.Int32
	failNext atomic.Int32 // connections to refuse
	block    chan struct{}
	inHang   chan struct{} // receives when a hang call reaches the server
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{block: make(chan struct{}), inHang: make(chan struct{}, 1)}
	f.srv = sdk.NewServer(&sdk.Implementation{Name: "fixture", Version: "1"}, nil)
	sdk.AddTool(f.srv, &sdk.Tool{Name: "echo", Description: "Echo text.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(f.srv, &sdk.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("the widget is broken")
		})
	sdk.AddTool(f.srv, &sdk.Tool{Name: "hang", Description: "Blocks until released."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			select {
			case f.inHang <- struct{}{}:
			default:
			}
			select {
			case <-f.block:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "released"}}}, nil, nil
		})
	return f
}

func (f *fixture) transport(string, config.MCPServer) (sdk.Transport, error) {
	f.connects.Add(1)
	if f.failNext.Load() > 0 {
		f.failNext.Add(-1)
		return nil, errors.New("spawn failed")
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := f.srv.Connect(context.Background(), st, nil)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.sessions = append(f.sessions, ss)
	f.mu.Unlock()
	return ct, nil
}

// crash closes every live server session, as a dying process would.
func (f *fixture) crash() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.sessions {
		_ = s.Close()
	}
	f.sessions = nil
}

func newManager(t *testing.T, f *fixture, opts Options) *Manager {
	t.Helper()
	if opts.Servers == nil {
		opts.Servers = map[string]config.MCPServer{"fx": {Command: "unused"}}
	}
	opts.Transport = f.transport
	opts.BackoffMin, opts.BackoffMax = time.Millisecond, 5*time.Millisecond
	m := New(opts)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func names(ts []tool.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Info().Name)
	}
	return out
}

func find(t *testing.T, ts []tool.Tool, name string) tool.Tool {
	t.Helper()
	for _, x := range ts {
		if x.Info().Name == name {
			return x
		}
	}
	t.Fatalf("no tool %s in %v", name, names(ts))
	return nil
}

func TestToolsAppearWithSchemaAndReadOnlyHint(t *testing.T) {
	f := newFixture(t)
	m := newManager(t, f, Options{})
	if got := m.Tools(); len(got) != 0 {
		t.Fatalf("tools before start = %v", names(got))
	}
	m.Start()
	m.WaitReady(t.Context(), 10*time.Second)
	ts := m.Tools()
	if diff := cmp.Diff([]string{"mcp__fx__echo", "mcp__fx__fail", "mcp__fx__hang"}, names(ts)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	echo := find(t, ts, "mcp__fx__echo").Info()
	if echo.Class != tool.ClassMCP || !echo.ReadOnly {
		t.Errorf("echo info = %+v", echo)
	}
	var schema map[string]any
	if err := json.Unmarshal(echo.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if _, ok := schema["properties"].(map[string]any)["text"]; !ok || schema["type"] != "object" {
		t.Errorf("schema = %s", echo.Schema)
	}
	if find(t, ts, "mcp__fx__fail").Info().ReadOnly {
		t.Error("fail claims read-only without a hint")
	}
}

// mcp.deny_tools: a denied tool is never offered, by exact name or by a
// pattern; the server's other tools are.
func TestDeniedToolsAreNotOffered(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		deny []string
		want []string
	}{
		{[]string{"mcp__fx__fail"}, []string{"mcp__fx__echo", "mcp__fx__hang"}},
		{[]string{"mcp__fx__h*", "mcp__other__*"}, []string{"mcp__fx__echo", "mcp__fx__fail"}},
		{[]string{"mcp__fx__*"}, nil},
	} {
		m := newManager(t, f, Options{DenyTools: tc.deny})
		m.Start()
		m.WaitReady(t.Context(), 10*time.Second)
		if diff := cmp.Diff(tc.want, names(m.Tools())); diff != "" {
			t.Errorf("deny %v: tools (-want +got):\n%s", tc.deny, diff)
		}
	}
}

func TestCallResultsAndToolErrors(t *testing.T) {
	f := newFixture(t)
	m := newManager(t, f, Options{})
	m.Start()
	m.WaitReady(t.Context(), 10*time.Second)
	ts := m.Tools()
	res, err := find(t, ts, "mcp__fx__echo").Run(t.Context(), nil, json.RawMessage(`{"text":"hi"}`))
	if err != nil || res.IsError || res.Output != "echo: hi" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	capped := newManager(t, f, Options{OutputCap: 12})
	capped.Start()
	capped.WaitReady(t.Context(), 10*time.Second)
	res, _ = find(t, capped.Tools(), "mcp__fx__echo").Run(t.Context(), nil, json.RawMessage(`{"text":"a long text"}`))
	if !strings.HasPrefix(res.Output, "echo: a long") || !strings.Contains(res.Output, "[output truncated: 12 of 17 bytes shown]") {
		t.Errorf("capped output = %q", res.Output)
	}
	res, err = find(t, ts, "mcp__fx__fail").Run(t.Context(), nil, json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Output, "the widget is broken") {
		t.Errorf("fail = %+v, %v", res, err)
	}
	res, err = find(t, ts, "mcp__fx__echo").Run(t.Context(), nil, json.RawMessage(`[1]`))
	if err != nil || !res.IsError {
		t.Errorf("non-object input = %+v, %v", res, err)
	}
}

func TestCrashMidCallIsToolErrorAndServerRestarts(t *testing.T) {
	f := newFixture(t)
	m := newManager(t, f, Options{})
	m.Start()
	m.WaitReady(t.Context(), 10*time.Second)
	hang := find(t, m.Tools(), "mcp__fx__hang")
	done := make(chan tool.Result)
	go func() {
		res, err := hang.Run(t.Context(), nil, json.RawMessage(`{}`))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	// Crash only once the call is in flight on the server.
	select {
	case <-f.inHang:
	case <-time.After(30 * time.Second):
		t.Fatal("the hang call never reached the server")
	}
	f.crash()
	res := <-done
	if !res.IsError || !strings.Contains(res.Output, "stopped during the call") {
		t.Fatalf("in-flight call after crash = %+v", res)
	}
	// The next call waits for the restart and succeeds.
	res, err := find(t, m.Tools(), "mcp__fx__echo").Run(t.Context(), nil, json.RawMessage(`{"text":"again"}`))
	if err != nil || res.Output != "echo: again" {
		t.Fatalf("after restart = %+v, %v", res, err)
	}
	if got := f.connects.Load(); got != 2 {
		// One manager: the first connection and the restart.
		t.Errorf("connections = %d, want 2 (start + restart)", got)
	}
	if st := m.Status()[0]; st.Restarts != 1 || st.State != StateReady {
		t.Errorf("status = %+v", st)
	}
}

func TestFailingServerReportedOnceAndHasNoTools(t *testing.T) {
	f := newFixture(t)
	f.failNext.Store(100)
	var mu sync.Mutex
	var reports []string
	m := newManager(t, f, Options{MaxRestarts: 3, Report: func(s string, err error) {
		mu.Lock()
		reports = append(reports, s+": "+err.Error())
		mu.Unlock()
	}})
	m.Start()
	for m.Status()[0].State != StateFailed {
		time.Sleep(time.Millisecond)
	}
	if got := f.connects.Load(); got != 3 {
		t.Errorf("attempts = %d, want 3", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"fx: spawn failed"}, reports); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if ts := m.Tools(); len(ts) != 0 {
		t.Errorf("a failed server offers %v", names(ts))
	}
}

func TestLazyServerAdvertisesCachedToolsAndStartsOnFirstCall(t *testing.T) {
	cache := t.TempDir()
	f := newFixture(t)
	first := newManager(t, f, Options{CacheDir: cache})
	first.Start()
	first.WaitReady(t.Context(), 10*time.Second)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	f.connects.Store(0)

	m := newManager(t, f, Options{CacheDir: cache})
	m.Start() // lazy with a cached list: nothing starts
	ts := m.Tools()
	if len(ts) != 3 || f.connects.Load() != 0 {
		t.Fatalf("lazy server: tools %v, connects %d", names(ts), f.connects.Load())
	}
	if st := m.Status()[0]; !st.Cached || st.State != StateIdle {
		t.Errorf("status = %+v", st)
	}
	res, err := find(t, ts, "mcp__fx__echo").Run(t.Context(), nil, json.RawMessage(`{"text":"lazy"}`))
	if err != nil || res.Output != "echo: lazy" || f.connects.Load() != 1 {
		t.Fatalf("first call = %+v, %v (connects %d)", res, err, f.connects.Load())
	}
}

func TestToolListChangedIsPickedUp(t *testing.T) {
	f := newFixture(t)
	m := newManager(t, f, Options{})
	m.Start()
	m.WaitReady(t.Context(), 10*time.Second)
	sdk.AddTool(f.srv, &sdk.Tool{Name: "new one"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{}, nil, nil
	})
	deadline := time.Now().Add(10 * time.Second)
	for len(m.Tools()) != 4 {
		if time.Now().After(deadline) {
			t.Fatalf("tools after list_changed = %v", names(m.Tools()))
		}
		time.Sleep(time.Millisecond)
	}
	find(t, m.Tools(), "mcp__fx__new_one")
}

func TestCloseStopsServers(t *testing.T) {
	f := newFixture(t)
	m := newManager(t, f, Options{})
	m.Start()
	m.WaitReady(t.Context(), 10*time.Second)
	echo := find(t, m.Tools(), "mcp__fx__echo")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := m.Status()[0].State; st != StateClosed {
		t.Errorf("state after Close = %s", st)
	}
	res, _ := echo.Run(context.Background(), nil, json.RawMessage(`{"text":"x"}`))
	if !res.IsError {
		t.Errorf("call after Close = %+v", res)
	}
}

func TestServerEnvIsScrubbed(t *testing.T) {
	env := map[string]string{"PATH": "/bin", "HOME": "/h", "OPENAI_API_KEY": "sk-secret", "TOKEN": "t0k"}
	look := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got := ServerEnv(config.MCPServer{Env: map[string]string{"GITHUB_TOKEN": "${TOKEN}", "X": "${MISSING:-def}", "Y": "a$b"}}, look)
	want := []string{"GITHUB_TOKEN=t0k", "HOME=/h", "PATH=/bin", "X=def", "Y=a$b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(got, "\n"), "sk-secret") {
		t.Error("the provider key reached the server's environment")
	}
}

func TestSimplifySchemaAndNames(t *testing.T) {
	got := string(SimplifySchema(map[string]any{"$schema": "x", "anyOf": []any{}, "type": "object"}))
	if got != `{"properties":{},"type":"object"}` {
		t.Errorf("schema = %s", got)
	}
	if n := ToolName("gh", "get.issue/x"); n != "mcp__gh__get_issue_x" {
		t.Errorf("name = %s", n)
	}
	if n := ToolName("gh", strings.Repeat("a", 100)); len(n) != 64 {
		t.Errorf("long name has %d chars", len(n))
	}
}

func TestWaitReadyDoesNotWaitForAFailedServer(t *testing.T) {
	f := newFixture(t)
	f.failNext.Store(100)
	m := New(Options{Servers: map[string]config.MCPServer{"fx": {Command: "x"}}, Transport: f.transport,
		BackoffMin: time.Hour, BackoffMax: time.Hour})
	t.Cleanup(func() { _ = m.Close() })
	m.Start()
	done := make(chan struct{})
	go func() {
		m.WaitReady(t.Context(), time.Hour)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("WaitReady still waits for a server that failed to start")
	}
	if st := m.Status()[0]; st.Err == "" || len(st.Tools) != 0 {
		t.Errorf("status = %+v", st)
	}
}

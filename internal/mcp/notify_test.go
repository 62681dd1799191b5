package mcp

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// liveServer connects a Manager to srv in memory.
func liveServer(t *testing.T, srv *sdk.Server, opts Options) *Manager {
	t.Helper()
	opts.Servers = map[string]config.MCPServer{"lv": {Command: "unused"}}
	opts.Transport = func(string, config.MCPServer) (sdk.Transport, error) {
		ct, st := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	m := New(opts)
	t.Cleanup(func() { _ = m.Close() })
	// The catalogue is listed after the log level is set: both done.
	if err := m.WaitCatalog(t.Context(), "lv"); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestProgressIsPublishedLive: a server's notifications/progress for a
// call reach that call's Publish as notices, in order, while it runs.
func TestProgressIsPublishedLive(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "lv", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "work", Description: "Work in steps."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			if tok == nil {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "no progress token"}}}, nil, nil
			}
			for i := 1; i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: "step"}); err != nil {
					return nil, nil, err
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
		})
	m := liveServer(t, srv, Options{})
	var mu sync.Mutex
	var got []string
	env := &tool.Env{Publish: func(ev any) {
		if n, ok := ev.(messages.Notice); ok {
			mu.Lock()
			got = append(got, n.Text)
			mu.Unlock()
		}
	}}
	res, err := find(t, m.Tools(), "mcp__lv__work").Run(t.Context(), env, []byte(`{}`))
	if err != nil || res.Output != "done" {
		t.Fatalf("work: %v %+v", err, res)
	}
	// Notifications are handled apart from the response: wait for all
	// three (the test's deadline ends a wait for one that never comes).
	want := []string{"mcp__lv__work: 1/3 step", "mcp__lv__work: 2/3 step", "mcp__lv__work: 3/3 step"}
	for i := 0; ; i++ {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || i > 6000 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress notices (-want +got):\n%s", diff)
	}
}

// TestLogLevelFollowsOdins: a server that logs is asked for Odin's level
// (logging/setLevel), so it sends warnings and errors but not info, and
// what it sends lands in Odin's log.
func TestLogLevelFollowsOdins(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "lv", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "chatter", Description: "Log at every level."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			for _, l := range []sdk.LoggingLevel{"debug", "info", "warning", "error"} {
				if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: l, Data: "msg-" + string(l)}); err != nil {
					return nil, nil, err
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "logged"}}}, nil, nil
		})
	var buf syncBuffer
	m := liveServer(t, srv, Options{LogLevel: "warn", Log: zerolog.New(&buf)})
	if res, err := find(t, m.Tools(), "mcp__lv__chatter").Run(t.Context(), nil, []byte(`{}`)); err != nil || res.IsError {
		t.Fatalf("chatter: %v %+v", err, res)
	}
	// Log notifications are handled apart from the response: wait for
	// the last one sent.
	for i := 0; i < 6000 && !strings.Contains(buf.String(), "msg-error"); i++ {
		time.Sleep(5 * time.Millisecond)
	}
	log := buf.String()
	for _, want := range []string{`"data":"msg-warning"`, `"data":"msg-error"`, `"mcp_server":"lv"`} {
		if !strings.Contains(log, want) {
			t.Errorf("Odin's log lacks %s:\n%s", want, log)
		}
	}
	for _, not := range []string{"msg-debug", "msg-info"} {
		if strings.Contains(log, not) {
			t.Errorf("the server sent %s although Odin logs warnings and above:\n%s", not, log)
		}
	}
}

// TestElicitationDeclinedWithReason: without an Elicit answerer a
// server's request for input is declined, and the call's watcher is told
// which server asked what.
func TestElicitationDeclinedWithReason(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "lv", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ask", Description: "Ask the user."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, ok := req.Params.InputResponses["name"].(*sdk.ElicitResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"name": &sdk.ElicitParams{Message: "What is your name?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}, nil, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "action " + res.Action}}}, nil, nil
		})
	m := liveServer(t, srv, Options{})
	var notices []string
	env := &tool.Env{Publish: func(ev any) {
		if n, ok := ev.(messages.Notice); ok {
			notices = append(notices, n.Text)
		}
	}}
	res, err := find(t, m.Tools(), "mcp__lv__ask").Run(t.Context(), env, []byte(`{}`))
	if err != nil || res.Output != "action decline" {
		t.Fatalf("ask: %v %+v", err, res)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], `MCP server lv asked for input ("What is your name?"); declined:`) {
		t.Errorf("notices = %q", notices)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

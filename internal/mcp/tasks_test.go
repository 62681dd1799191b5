package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// taskServer is a hand-driven MCP server of protocol 2025-11-25 (go-sdk
// v1.8.0 serves no tasks) with one tool, "research", that runs only as a
// task. It records the methods it was asked, in order.
type taskServer struct {
	conn sdk.Connection
	// hold keeps tasks/result unanswered (the cancel test).
	hold bool

	mu      sync.Mutex
	methods []string
	params  map[string]json.RawMessage
	gotRes  chan struct{} // closed when tasks/result arrives
	once    sync.Once
}

func (s *taskServer) serve(ctx context.Context) {
	for {
		msg, err := s.conn.Read(ctx)
		if err != nil {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			continue
		}
		s.mu.Lock()
		s.methods = append(s.methods, req.Method)
		s.params[req.Method] = req.Params
		s.mu.Unlock()
		if !req.ID.IsValid() {
			continue
		}
		var result any = map[string]any{}
		var rerr error
		switch req.Method {
		case "server/discover":
			rerr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "tasks", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "research", "inputSchema": map[string]any{"type": "object"},
				"execution": map[string]any{"taskSupport": "required"}}}}
		case "tools/call":
			var p struct {
				Task map[string]any `json:"task"`
			}
			_ = json.Unmarshal(req.Params, &p)
			if p.Task == nil {
				rerr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Tool research requires task augmentation"}
				break
			}
			result = map[string]any{"task": map[string]any{"taskId": "t1", "status": "working", "statusMessage": "Gathering sources",
				"createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000, "pollInterval": 1}}
		case "tasks/get":
			result = map[string]any{"taskId": "t1", "status": "working", "statusMessage": "Analyzing content",
				"createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000}
		case "tasks/result":
			s.once.Do(func() { close(s.gotRes) })
			if s.hold {
				continue
			}
			// A status notification, then the result once polled (in
			// the background: the polls must still be read).
			note, _ := json.Marshal(map[string]any{"taskId": "t1", "status": "working", "statusMessage": "Synthesizing findings"})
			_ = s.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/tasks/status", Params: note})
			go func(id jsonrpc.ID) {
				for !s.asked("tasks/get") {
					if ctx.Err() != nil {
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
				raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": "the report"}},
					"_meta": map[string]any{relatedTaskKey: map[string]any{"taskId": "t1"}}})
				_ = s.conn.Write(ctx, &jsonrpc.Response{ID: id, Result: raw})
			}(req.ID)
			continue
		case "tasks/cancel":
			result = map[string]any{"taskId": "t1", "status": "cancelled", "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000}
		}
		raw, _ := json.Marshal(result)
		resp := &jsonrpc.Response{ID: req.ID, Result: raw}
		if rerr != nil {
			resp = &jsonrpc.Response{ID: req.ID, Error: rerr}
		}
		_ = s.conn.Write(ctx, resp)
	}
}

func (s *taskServer) asked(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.methods {
		if m == method {
			return true
		}
	}
	return false
}

func newTaskServer(t *testing.T, hold bool) (*Manager, *taskServer) {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	conn, err := st.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ts := &taskServer{conn: conn, hold: hold, params: map[string]json.RawMessage{}, gotRes: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go ts.serve(ctx)
	m := New(Options{
		Servers:   map[string]config.MCPServer{"rs": {Command: "unused"}},
		Transport: func(string, config.MCPServer) (sdk.Transport, error) { return ct, nil },
	})
	t.Cleanup(func() {
		cancel()
		_ = conn.Close()
		_ = m.Close()
	})
	if err := m.Connect(t.Context(), "rs"); err != nil {
		t.Fatal(err)
	}
	return m, ts
}

// TestTaskAugmentedCall: a tool the server runs only as a task is called
// with a task, its result awaited with tasks/result while its status
// messages (from tasks/get and notifications/tasks/status) are shown.
func TestTaskAugmentedCall(t *testing.T) {
	m, ts := newTaskServer(t, false)
	var mu sync.Mutex
	var notices []string
	env := &tool.Env{Publish: func(ev any) {
		if n, ok := ev.(messages.Notice); ok {
			mu.Lock()
			notices = append(notices, n.Text)
			mu.Unlock()
		}
	}}
	res, err := find(t, m.Tools(), "mcp__rs__research").Run(t.Context(), env, []byte(`{"topic":"go"}`))
	if err != nil || res.IsError || res.Output != "the report" {
		t.Fatalf("research: %v %+v", err, res)
	}
	var call struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Task      struct {
			TTL int64 `json:"ttl"`
		} `json:"task"`
	}
	ts.mu.Lock()
	_ = json.Unmarshal(ts.params["tools/call"], &call)
	ts.mu.Unlock()
	if call.Name != "research" || call.Arguments["topic"] != "go" || call.Task.TTL != taskTTL.Milliseconds() {
		t.Errorf("tools/call params = %+v", call)
	}
	mu.Lock()
	joined := strings.Join(notices, "\n")
	mu.Unlock()
	for _, want := range []string{"mcp__rs__research: Gathering sources (working)", "Synthesizing findings", "Analyzing content"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notices lack %q:\n%s", want, joined)
		}
	}
}

// TestTaskCancelledWithTheTurn: cancelling the call's context while the
// server works cancels the task on the server (tasks/cancel).
func TestTaskCancelledWithTheTurn(t *testing.T) {
	m, ts := newTaskServer(t, true)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-ts.gotRes
		cancel()
	}()
	_, err := find(t, m.Tools(), "mcp__rs__research").Run(ctx, &tool.Env{}, []byte(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if !ts.asked("tasks/cancel") {
		t.Fatal("the task was not cancelled on the server")
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	ts.mu.Lock()
	_ = json.Unmarshal(ts.params["tasks/cancel"], &p)
	ts.mu.Unlock()
	if p.TaskID != "t1" {
		t.Errorf("tasks/cancel for %q, want t1", p.TaskID)
	}
}

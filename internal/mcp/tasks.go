package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// MCP tasks (protocol 2025-11-25, SEP-1686) are not in go-sdk v1.8.0: it
// has no task parameter on tools/call, no tasks/get, tasks/result or
// tasks/cancel, and drops a tool's execution.taskSupport. A server whose
// tool requires task augmentation (server-everything's
// simulate-research-query) refuses a plain call. taskConn supplies the
// client side under the SDK: on stdio and SSE it sits between the SDK and
// the transport's connection, sends those requests with IDs of its own
// and takes their responses off the stream before the SDK's reader sees
// them, and reads taskSupport from the tools/list results passing by.
//
// A Streamable HTTP connection is not wrapped: the SDK tells it of the
// session's start through an unexported method (opening the standalone
// SSE stream) that a wrapper would hide. Over HTTP the side channel posts
// its requests itself, in the SDK's session (httptasks.go).

// relatedTaskKey is the _meta key naming the task a message belongs to.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// taskTTL is how long Odin asks a server to keep a task's result.
const taskTTL = 10 * time.Minute

// taskTransport wraps a transport's connections in taskConns; the latest
// is kept for the session dial builds on it.
type taskTransport struct {
	sdk.Transport
	conn *taskConn
}

func (t *taskTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = newTaskConn(c)
	return t.conn, nil
}

// wrapForTasks wraps every transport but Streamable HTTP's (see above).
func wrapForTasks(t sdk.Transport) (sdk.Transport, *taskTransport) {
	if _, ok := t.(*sdk.StreamableClientTransport); ok {
		return t, nil
	}
	tt := &taskTransport{Transport: t}
	return tt, tt
}

// taskConn is a Connection with a side channel for the task methods.
// Safe for concurrent use: the SDK reads from one goroutine and writes
// from many.
type taskConn struct {
	sdk.Connection // nil for the HTTP side channel
	// send writes one message: the connection's Write, or over
	// Streamable HTTP a POST of Odin's own (httptasks.go).
	send func(context.Context, jsonrpc.Message) error
	next atomic.Int64

	mu       sync.Mutex
	waiting  map[string]chan *jsonrpc.Response
	listIDs  map[any]bool
	support  map[string]string         // tool name -> taskSupport
	watchers map[string]func(taskInfo) // task ID -> status watcher
	envs     map[string]*tool.Env      // task ID -> the calling tool's env
	ended    chan struct{}             // closed when Read fails
	endErr   error
	onEnd    sync.Once
}

func newTaskConn(c sdk.Connection) *taskConn {
	tc := &taskConn{Connection: c, waiting: map[string]chan *jsonrpc.Response{}, listIDs: map[any]bool{},
		support: map[string]string{}, watchers: map[string]func(taskInfo){}, envs: map[string]*tool.Env{}, ended: make(chan struct{})}
	if c != nil {
		tc.send = c.Write
	}
	return tc
}

// deliver hands a response to the side-channel call waiting for it and
// reports whether it was one of Odin's own.
func (c *taskConn) deliver(m *jsonrpc.Response) bool {
	id, ok := m.ID.Raw().(string)
	if !ok || !strings.HasPrefix(id, "odin-task-") {
		return false
	}
	c.mu.Lock()
	ch := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- m
	}
	return true
}

// status hands notifications/tasks/status to its task's watcher.
func (c *taskConn) status(params json.RawMessage) {
	var t taskInfo
	if json.Unmarshal(params, &t) != nil {
		return
	}
	c.mu.Lock()
	w := c.watchers[t.TaskID]
	c.mu.Unlock()
	if w != nil {
		w(t)
	}
}

// taskInfo is the protocol's Task.
type taskInfo struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

func (t taskInfo) terminal() bool {
	switch t.Status {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.mu.Lock()
		c.listIDs[req.ID.Raw()] = true
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.onEnd.Do(func() {
				c.mu.Lock()
				c.endErr = err
				c.mu.Unlock()
				close(c.ended)
			})
			return nil, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if c.deliver(m) {
				continue // the SDK never asked it
			}
			c.mu.Lock()
			isList := c.listIDs[m.ID.Raw()]
			delete(c.listIDs, m.ID.Raw())
			c.mu.Unlock()
			if isList && m.Error == nil {
				c.noteTools(m.Result)
			}
		case *jsonrpc.Request:
			if !m.ID.IsValid() && m.Method == "notifications/tasks/status" {
				c.status(m.Params)
				continue // unknown to the SDK
			}
		}
		return msg, nil
	}
}

// noteTools records each tool's execution.taskSupport.
func (c *taskConn) noteTools(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range r.Tools {
		if t.Execution != nil && t.Execution.TaskSupport != "" {
			c.support[t.Name] = t.Execution.TaskSupport
		} else {
			delete(c.support, t.Name)
		}
	}
}

// taskSupport is a tool's execution.taskSupport ("" when it declared none).
func (c *taskConn) taskSupport(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.support[name]
}

// envOf is the env of the call that started task id (nil if none).
func (c *taskConn) envOf(id string) *tool.Env {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.envs[id]
}

// call sends one request on the side channel and waits for its response;
// when ctx ends first the server is told (notifications/cancelled).
func (c *taskConn) call(ctx context.Context, method string, params any, out any) error {
	id := "odin-task-" + strconv.FormatInt(c.next.Add(1), 10)
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	jid, err := jsonrpc.MakeID(id)
	if err != nil {
		return err
	}
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}
	if err := c.send(ctx, &jsonrpc.Request{ID: jid, Method: method, Params: raw}); err != nil {
		forget()
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return fmt.Errorf("%s: %w", method, r.Error)
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				return fmt.Errorf("%s: %w", method, err)
			}
		}
		return nil
	case <-c.ended:
		forget()
		c.mu.Lock()
		err := c.endErr
		c.mu.Unlock()
		return fmt.Errorf("%s: %w (%w)", method, sdk.ErrConnectionClosed, err)
	case <-ctx.Done():
		forget()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		note, _ := json.Marshal(map[string]any{"requestId": id, "reason": "cancelled by Odin"})
		_ = c.send(cctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: note})
		return ctx.Err()
	}
}

// callTask runs a tool call as a task: tools/call with a task, then
// tasks/result (which the server holds until the task ends, delivering on
// the way the requests it queued for the client, e.g. elicitation), while
// tasks/get polls show the task's status messages live through publish.
// When ctx ends (the turn was cancelled) the task is cancelled
// (tasks/cancel).
func (c *taskConn) callTask(ctx context.Context, env *tool.Env, name string, params *sdk.CallToolParams, publish func(string)) (*sdk.CallToolResult, error) {
	p := map[string]any{"name": params.Name, "arguments": params.Arguments, "task": map[string]any{"ttl": taskTTL.Milliseconds()}}
	if tok := params.GetProgressToken(); tok != nil {
		p["_meta"] = map[string]any{"progressToken": tok}
	}
	var created struct {
		Task *taskInfo `json:"task"`
	}
	var raw json.RawMessage
	if err := c.call(ctx, "tools/call", p, &raw); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.Task == nil || created.Task.TaskID == "" {
		// The server ran it at once after all: a plain result.
		var res sdk.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("tools/call with a task: neither a task nor a result: %w", err)
		}
		return &res, nil
	}
	task := *created.Task
	last := ""
	show := func(t taskInfo) {
		msg := strings.TrimSpace(t.StatusMessage)
		if msg == "" || msg == last {
			return
		}
		last = msg
		if publish != nil {
			publish(fmt.Sprintf("%s: %s (%s)", name, msg, t.Status))
		}
	}
	var showMu sync.Mutex
	watch := func(t taskInfo) {
		showMu.Lock()
		defer showMu.Unlock()
		show(t)
	}
	c.mu.Lock()
	c.watchers[task.TaskID] = watch
	c.envs[task.TaskID] = env
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.watchers, task.TaskID)
		delete(c.envs, task.TaskID)
		c.mu.Unlock()
	}()
	watch(task)

	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go c.poll(pctx, task, watch)

	var res sdk.CallToolResult
	err := c.call(ctx, "tasks/result", map[string]any{"taskId": task.TaskID}, &res)
	stopPoll()
	if ctx.Err() != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = c.call(cctx, "tasks/cancel", map[string]any{"taskId": task.TaskID}, nil)
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// poll asks tasks/get at the server's suggested interval (bounded to
// 250ms–5s) until the task ends or ctx does.
func (c *taskConn) poll(ctx context.Context, task taskInfo, watch func(taskInfo)) {
	every := time.Duration(task.PollInterval) * time.Millisecond
	every = min(max(every, 250*time.Millisecond), 5*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var cur taskInfo
		if err := c.call(ctx, "tasks/get", map[string]any{"taskId": task.TaskID}, &cur); err != nil {
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return
			}
			continue
		}
		watch(cur)
		if cur.terminal() {
			return
		}
	}
}

// relatedTaskEnv is the env of the call whose task a server's request
// belongs to (its _meta names the task), nil when none.
func (s *server) relatedTaskEnv(meta map[string]any) *tool.Env {
	rt, ok := meta[relatedTaskKey].(map[string]any)
	if !ok {
		return nil
	}
	id, _ := rt["taskId"].(string)
	s.mu.Lock()
	tc := s.tc
	s.mu.Unlock()
	if tc == nil || id == "" {
		return nil
	}
	return tc.envOf(id)
}

// taskNotice is what the user sees of a task's status message.
func taskNotice(text string) messages.Notice { return messages.Notice{Level: "info", Text: text} }

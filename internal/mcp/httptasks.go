package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpTasks is the task side channel over Streamable HTTP: each request
// is a POST of Odin's own to the server's endpoint, in the SDK's session
// (its Mcp-Session-Id and protocol version), through the server's HTTP
// client (its headers and token). The response comes as JSON or as an
// SSE stream, which may also carry the server's requests for the task
// (elicitation, sampling: tasks/result delivers them on its own stream);
// those are answered here with the client's handlers, by POST.
type httpTasks struct {
	s        *server
	endpoint string
	hc       *http.Client
	cs       *sdk.ClientSession
	tc       *taskConn
}

// newHTTPTasks returns the side channel of cs, a session over t.
func newHTTPTasks(s *server, t *sdk.StreamableClientTransport, cs *sdk.ClientSession) *taskConn {
	hc := t.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	h := &httpTasks{s: s, endpoint: t.Endpoint, hc: hc, cs: cs}
	h.tc = newTaskConn(nil)
	h.tc.send = h.post
	return h.tc
}

// relist reads the tools' taskSupport with a tools/list of its own (the
// SDK's lists pass where Odin cannot see them).
func (c *taskConn) relist(ctx context.Context) {
	var cursor string
	for range 20 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var raw json.RawMessage
		if err := c.call(ctx, "tools/list", params, &raw); err != nil {
			return
		}
		c.noteTools(raw)
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		if json.Unmarshal(raw, &page) != nil || page.NextCursor == "" {
			return
		}
		cursor = page.NextCursor
	}
}

// post sends msg; a response stream is read in the background for as
// long as ctx (the call's) lasts.
func (h *httpTasks) post(ctx context.Context, msg jsonrpc.Message) error {
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id := h.cs.ID(); id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	if ir := h.cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
		req.Header.Set("Mcp-Protocol-Version", ir.ProtocolVersion)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		resp.Body.Close()
		return nil
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	go h.read(ctx, resp)
	return nil
}

// read takes the messages of one response: JSON, or SSE events.
func (h *httpTasks) read(ctx context.Context, resp *http.Response) {
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return
		}
		if msg, err := jsonrpc.DecodeMessage(b); err == nil {
			h.handle(ctx, msg)
		}
		return
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				if msg, err := jsonrpc.DecodeMessage([]byte(strings.Join(data, "\n"))); err == nil {
					h.handle(ctx, msg)
				}
			}
			data = data[:0]
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

func (h *httpTasks) handle(ctx context.Context, msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		h.tc.deliver(m)
	case *jsonrpc.Request:
		if !m.ID.IsValid() {
			switch m.Method {
			case "notifications/tasks/status":
				h.tc.status(m.Params)
			case "notifications/progress":
				var p sdk.ProgressNotificationParams
				if json.Unmarshal(m.Params, &p) == nil {
					h.s.m.progress.handle(ctx, &sdk.ProgressNotificationClientRequest{Params: &p})
				}
			}
			return
		}
		go h.answer(ctx, m)
	}
}

// answer serves one of the server's requests that came on a side-channel
// stream, with the handlers the SDK uses for the others.
func (h *httpTasks) answer(ctx context.Context, m *jsonrpc.Request) {
	var result any
	var rerr error
	switch m.Method {
	case "ping":
		result = map[string]any{}
	case "elicitation/create":
		var p sdk.ElicitParams
		if rerr = json.Unmarshal(m.Params, &p); rerr == nil {
			result, rerr = h.s.elicit(ctx, &sdk.ElicitRequest{Session: h.cs, Params: &p})
		}
	case "sampling/createMessage":
		var p sdk.CreateMessageParams
		if rerr = json.Unmarshal(m.Params, &p); rerr == nil {
			result, rerr = h.s.sample(ctx, &sdk.CreateMessageRequest{Session: h.cs, Params: &p})
		}
	case "roots/list":
		h.s.m.rootsMu.Lock()
		roots := append([]*sdk.Root{}, h.s.m.roots...)
		h.s.m.rootsMu.Unlock()
		result = &sdk.ListRootsResult{Roots: roots}
	default:
		rerr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method}
	}
	resp := &jsonrpc.Response{ID: m.ID}
	if rerr != nil {
		var werr *jsonrpc.Error
		if !errors.As(rerr, &werr) {
			werr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: rerr.Error()}
		}
		resp.Error = werr
	} else if raw, err := json.Marshal(result); err == nil {
		resp.Result = raw
	} else {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	// The answer outlives a call that just ended only briefly.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_ = h.post(pctx, resp)
}

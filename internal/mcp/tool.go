package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Prefix starts every MCP tool name, as in Claude Code: mcp__SERVER__TOOL.
const Prefix = "mcp__"

// maxNameLen is the longest tool name providers accept (OpenAI: 64).
const maxNameLen = 64

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

// ToolName is the name agents see for a server's tool: characters
// providers reject become "_", and the name is cut to 64 characters.
func ToolName(server, remote string) string {
	n := Prefix + server + "__" + unsafeName().ReplaceAllString(remote, "_")
	if len(n) > maxNameLen {
		n = n[:maxNameLen]
	}
	return n
}

// IsToolName reports whether name is an MCP tool's name.
func IsToolName(name string) bool { return strings.HasPrefix(name, Prefix) }

// adapters builds the Odin tools for a server's list; names that collide
// after sanitising keep the first tool.
// denied reports whether mcp.deny_tools keeps the tool name from agents.
func (m *Manager) denied(name string) bool {
	for _, p := range m.opts.DenyTools {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func (s *server) adapters(list []*sdk.Tool) []tool.Tool {
	out := make([]tool.Tool, 0, len(list))
	seen := map[string]bool{}
	for _, t := range list {
		if t == nil || t.Name == "" {
			continue
		}
		name := ToolName(s.name, t.Name)
		if seen[name] || s.m.denied(name) {
			continue
		}
		seen[name] = true
		desc := strings.TrimSpace(t.Description)
		if desc == "" {
			desc = t.Title
		}
		desc = fmt.Sprintf("%s\n\n(Tool %q of the MCP server %q.)", desc, t.Name, s.name)
		ro := t.Annotations != nil && t.Annotations.ReadOnlyHint
		out = append(out, &remoteTool{s: s, remote: t.Name, info: tool.Info{
			Name: name, Description: strings.TrimSpace(desc), Class: tool.ClassMCP,
			Schema: SimplifySchema(t.InputSchema), ReadOnly: ro,
		}})
	}
	return out
}

// SimplifySchema makes a server's input schema acceptable to providers
// that validate tool schemas strictly (OpenAI): the root is an object with
// properties, and root-level keywords they reject ($schema, $id, oneOf,
// anyOf, allOf, not, enum) are dropped. The server still validates the
// arguments it receives.
func SimplifySchema(in any) json.RawMessage {
	var m map[string]any
	if b, err := json.Marshal(in); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	for _, k := range []string{"$schema", "$id", "oneOf", "anyOf", "allOf", "not", "enum"} {
		delete(m, k)
	}
	m["type"] = "object"
	if _, ok := m["properties"].(map[string]any); !ok {
		m["properties"] = map[string]any{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return b
}

// remoteTool is one tool of an MCP server.
type remoteTool struct {
	s      *server
	remote string
	info   tool.Info
}

func (t *remoteTool) Info() tool.Info { return t.info }

// Run calls the tool on its server, starting the server if need be. Every
// failure (bad input, the server down or crashing mid-call, the tool's own
// error) is an error Result the model can act on.
func (t *remoteTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var args map[string]any
	if strings.TrimSpace(string(input)) == "" {
		input = json.RawMessage("{}")
	}
	if err := json.Unmarshal(input, &args); err != nil || args == nil {
		return tool.Errorf("invalid input for %s: send the arguments as one JSON object matching the tool's schema", t.info.Name), nil
	}
	timeout := t.s.cfg.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Starting (or restarting) gets at most the connect budget of the call.
	wctx, wcancel := context.WithTimeout(ctx, t.s.m.opts.ConnectTimeout)
	cs, err := t.s.session(wctx)
	wcancel()
	if err != nil {
		return tool.Errorf("%s is unavailable: the MCP server %q is not running: %v. Do not retry now; do without it or tell the user.", t.info.Name, t.s.name, err), nil
	}
	// Protocol 2026-07-28 carries the log level in each request.
	params := &sdk.CallToolParams{Name: t.remote, Arguments: args,
		Meta: sdk.Meta{sdk.MetaKeyLogLevel: mcpLevel(t.s.m.opts.LogLevel)}}
	var status func(string)
	if env != nil && env.Publish != nil {
		// Progress is shown live to whoever watches the session.
		publish, name := env.Publish, t.info.Name
		tok, done := t.s.m.progress.track(func(p *sdk.ProgressNotificationParams) { publish(progressNotice(name, p)) })
		defer done()
		params.SetProgressToken(tok)
		status = func(text string) { publish(taskNotice(text)) }
	}
	if env != nil {
		ctx = withElicitEnv(ctx, env)
		defer t.s.enter(env)()
	}
	t.s.mu.Lock()
	tc := t.s.tc
	t.s.mu.Unlock()
	var res *sdk.CallToolResult
	if tc != nil && tc.taskSupport(t.remote) == "required" {
		// The server runs this tool only as a task (see tasks.go).
		res, err = tc.callTask(ctx, env, t.info.Name, params, status)
	} else {
		res, err = cs.CallTool(ctx, params)
	}
	if err != nil {
		switch {
		case ctx.Err() == context.DeadlineExceeded:
			return tool.Errorf("%s timed out after %s.", t.info.Name, timeout), nil
		case ctx.Err() != nil:
			return tool.Result{}, ctx.Err()
		case errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || t.s.lost(cs) || closedSoon(cs):
			t.s.dropSession(cs)
			return tool.Errorf("%s failed: the MCP server %q stopped during the call (%v). Odin is restarting it; whether the call took effect is unknown, so check before retrying.", t.info.Name, t.s.name, err), nil
		}
		return tool.Errorf("%s failed: %v", t.info.Name, err), nil
	}
	r := convert(t.info.Name, res, t.s.m.opts.OutputCap)
	if r.IsError {
		// A write the sandbox refused (server-filesystem outside its
		// granted directories): say which path and how to allow it.
		if hint := t.s.explain(strings.Split(r.Output, "\n")); hint != "" {
			r.Output += "\n[odin: " + hint + "]"
		}
	}
	return r, nil
}

// lost reports whether cs is no longer the server's live session (it died
// during a call).
func (s *server) lost(cs *sdk.ClientSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cs != cs
}

// dropSession marks cs, found dead by a call, as no longer ready, so that
// the next call waits for the supervisor's restart instead of meeting the
// closing connection before the supervisor has noticed it ended.
func (s *server) dropSession(cs *sdk.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cs == cs && s.state == StateReady {
		s.state = StateConnecting
		s.notify()
	}
}

// closedSoon reports whether cs ends within a moment: a call that failed
// because the server died sees its connection close right after.
func closedSoon(cs *sdk.ClientSession) bool {
	done := make(chan struct{})
	go func() {
		// Returns when the session ends; the Manager closes every session.
		_ = cs.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(250 * time.Millisecond):
		return false
	}
}

// convert turns a call's result into what the model sees: text as is,
// resources inline when they are text, images (image content, and
// resources whose blob is an image) as image parts the model sees after
// the tool results, each with a line in the text saying so; other binary
// content (audio, blobs, images that fail llm.NewImage's checks) as a line
// describing it; structured content as JSON when no text says it already.
// Output beyond limit bytes is cut with a note. A model that takes no
// images gets each image's label instead (llm.Request.TextOnly).
func convert(name string, res *sdk.CallToolResult, limit int) tool.Result {
	var parts []string
	var images []messages.Image
	addImage := func(label string, data []byte) bool {
		im, err := llm.NewImage(label, data)
		if err != nil {
			parts = append(parts, fmt.Sprintf("[not shown: %v]", err))
			return false
		}
		images = append(images, messages.Image{Name: im.Name, MIME: im.MIME, Data: im.Data, Width: im.Width, Height: im.Height})
		parts = append(parts, im.Label()+" (the picture follows the tool results)")
		return true
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			addImage(fmt.Sprintf("%s image %d", name, len(images)+1), c.Data)
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes: not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s %s]", c.URI, c.Name, c.MIMEType))
		case *sdk.EmbeddedResource:
			if r := c.Resource; r != nil {
				switch {
				case r.Text != "" || len(r.Blob) == 0:
					parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
				case strings.HasPrefix(r.MIMEType, "image/"):
					addImage(r.URI, r.Blob)
				default:
					parts = append(parts, fmt.Sprintf("[resource %s: %s, %d bytes: not shown]", r.URI, r.MIMEType, len(r.Blob)))
				}
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	out := strings.Join(parts, "\n")
	if out == "" && !res.IsError {
		out = "(no output)"
	}
	if len(out) > limit {
		cut := limit
		for cut > 0 && !isRuneStart(out[cut]) {
			cut--
		}
		out = fmt.Sprintf("%s\n[output truncated: %d of %d bytes shown]", out[:cut], cut, len(out))
	}
	return tool.Result{Output: out, IsError: res.IsError, Images: images}
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// enter records env as a call in flight; the returned func ends it.
func (s *server) enter(env *tool.Env) func() {
	s.mu.Lock()
	s.active = append(s.active, env)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i := len(s.active) - 1; i >= 0; i-- {
			if s.active[i] == env {
				s.active = append(s.active[:i:i], s.active[i+1:]...)
				return
			}
		}
	}
}

// callEnv is the env a server's request belongs to: the call whose
// context carries it (multi round-trip), the call whose task it names,
// else the newest call in flight; nil outside any call.
func (s *server) callEnv(ctx context.Context, meta map[string]any) *tool.Env {
	if env, ok := ctx.Value(elicitEnvKey{}).(*tool.Env); ok && env != nil {
		return env
	}
	if env := s.relatedTaskEnv(meta); env != nil {
		return env
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.active); n > 0 {
		return s.active[n-1]
	}
	return nil
}

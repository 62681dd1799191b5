package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// crashingPermission panics, as the shell policy did on A=([0]=) (a nil
// dereference while it walked the command), for ExecuteCommand calls
// whose command is crashCommand, and asks the real policy otherwise. The
// policy's own crasher is fixed; this puts one back where it was, so the
// test keeps proving that a crash in the permission check stays inside
// the call that caused it.
type crashingPermission struct{ real tool.Permission }

const crashCommand = "A=([0]=)"

func (c crashingPermission) Authorize(ctx context.Context, env *tool.Env, info tool.Info, input json.RawMessage) error {
	var in struct {
		Command string `json:"command"`
	}
	if info.Name == tools.NameExecuteCommand && json.Unmarshal(input, &in) == nil && in.Command == crashCommand {
		var node *struct{ value string }
		_ = node.value // the nil dereference the policy hit
	}
	return c.real.Authorize(ctx, env, info, input)
}

// TestServeSurvivesPolicyPanic: under odin serve, session A's command
// crashes the permission check; A's call becomes an error result the model
// reads (and A's turn completes), and session B, busy at the same time,
// completes its turn. Before the fix the panic ended the server and every
// session in it.
func TestServeSurvivesPolicyPanic(t *testing.T) {
	old := permissionHook
	permissionHook = func(p tool.Permission) tool.Permission { return crashingPermission{real: p} }
	defer func() { permissionHook = old }()

	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "proj")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	script := llmtest.NewScript()
	script.Add("orchestrator",
		llmtest.Step{When: "crash me", ToolCalls: []llmtest.ToolCall{llmtest.Call(tools.NameExecuteCommand, map[string]any{"command": crashCommand})}},
		llmtest.Step{When: "internal error in Odin", Text: "the command failed inside odin"},
		llmtest.Step{When: "hello", Latency: llmtest.Duration(200 * time.Millisecond), Text: "hi"},
	)
	model, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	t.Setenv("OPENAI_BASE_URL", model.URL())
	opener := newSessionOpener(&globalFlags{logLevel: "error"})
	srv, err := serve.New(serve.Options{Opener: serveOpener{opener}, Token: "t0k", Roots: []string{root}, Idle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	e := &loadEnv{root: root, model: model, srv: srv, opener: opener, http: httptest.NewServer(srv.Handler()), token: "t0k"}
	defer e.close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	type outcome struct {
		status   string
		toolErrs []string
		err      error
	}
	run := func(body string) (string, <-chan outcome) {
		code, s, err := e.call("POST", "/v1/sessions", map[string]string{"project": root})
		if err != nil || code != http.StatusCreated {
			t.Fatalf("create: %d %v %v", code, s, err)
		}
		id := s["id"].(string)
		evs, err := e.stream(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if code, out, err := e.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": body}); err != nil || code != http.StatusAccepted {
			t.Fatalf("message: %d %v %v", code, out, err)
		}
		done := make(chan outcome, 1)
		go func() {
			var o outcome
			for ev := range evs {
				switch ev.typ {
				case "tool_finished":
					if ev.data["is_error"] == true {
						o.toolErrs = append(o.toolErrs, fmt.Sprint(ev.data["name"], ": ", ev.data["output"]))
					}
				case "turn_finished":
					o.status = fmt.Sprint(ev.data["result"].(map[string]any)["status"])
					done <- o
					return
				}
			}
			o.err = fmt.Errorf("session %s: the event stream ended before the turn finished (%v)", id, ctx.Err())
			done <- o
		}()
		return id, done
	}
	_, a := run("crash me")
	_, b := run("hello")
	ra, rb := <-a, <-b
	if ra.err != nil || rb.err != nil {
		t.Fatalf("A: %v; B: %v", ra.err, rb.err)
	}
	if ra.status != "done" || len(ra.toolErrs) != 1 || !strings.Contains(ra.toolErrs[0], "ExecuteCommand failed with an internal error") {
		t.Errorf("session A: turn %s, tool errors %q; want done with the command's call failed", ra.status, ra.toolErrs)
	}
	if strings.Contains(strings.Join(ra.toolErrs, ""), "goroutine ") {
		t.Errorf("the stack reached the model: %q", ra.toolErrs)
	}
	if rb.status != "done" {
		t.Errorf("session B: turn %s, want done", rb.status)
	}
	// The model read the failure as the call's result.
	saw := false
	for _, r := range model.RequestsFor("orchestrator") {
		for _, m := range r.Body.LLMMessages() {
			saw = saw || strings.Contains(m.Content, "ExecuteCommand failed with an internal error")
		}
	}
	if !saw {
		t.Error("no request to the model carried the failed call's result")
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestACPAnswersMalformedLines: an editor (or a proxy) that sends a line
// that is not JSON, JSON that is not a JSON-RPC request, or a line past
// the SDK's 10 MiB limit gets a JSON-RPC error for each — -32700 with id
// null, -32600 with the message's id when it has one — and odin acp keeps
// serving the open session: the next prompt is answered.
func TestACPAnswersMalformedLines(t *testing.T) {
	env, root := acpEnv(t)
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "still there", Text: "Still here."}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &acpClient{answer: "once"}
	p, w, sid := wiredSession(ctx, t, env, root, c, false)
	in := p.stdin.(io.Writer)

	bad := []struct {
		line string
		code int
		id   string
	}{
		{"hello, not json", -32700, "null"},
		{`{"jsonrpc":"2.0","id":7,"method":"session/prompt",`, -32700, "null"},
		{`[1,2]`, -32600, "null"},
		{`42`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":8}`, -32600, "8"},
		{`{"jsonrpc":"1.0","id":"nine","method":"initialize","params":{}}`, -32600, `"nine"`},
		{`{"jsonrpc":"2.0","id":10,"method":5}`, -32600, "10"},
		{`{"jsonrpc":"2.0","id":11,"method":"session/cancel","params":"x"}`, -32600, "11"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":{}}`, -32600, "null"},
		{`{"jsonrpc":"2.0","method":"x","params":{"s":"` + strings.Repeat("a", 11<<20) + `"}}`, -32600, "null"},
	}
	from := len(w.snapshot())
	for _, b := range bad {
		if _, err := in.Write([]byte(b.line + "\n")); err != nil {
			t.Fatalf("writing %.40q: %v", b.line, err)
		}
		i := w.waitFor(ctx, t, from, "an error answer to "+b.line[:min(len(b.line), 40)], func(m wireMsg) bool { return len(m.Error) > 0 })
		m := w.snapshot()[i]
		from = i + 1
		var e struct {
			Code int `json:"code"`
		}
		if err := json.Unmarshal(m.Error, &e); err != nil || e.Code != b.code || string(m.ID) != b.id {
			t.Errorf("answer to %.60q: id %s error %s, want id %s code %d", b.line, m.ID, m.Error, b.id, b.code)
		}
	}
	resp, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: prompt("are you still there?")})
	if err != nil {
		t.Fatalf("prompt after the malformed lines: %v", err)
	}
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason %q, want end_turn", resp.StopReason)
	}
	if agent, _, _, _ := updatesText(c.take()); !strings.Contains(agent, "Still here.") {
		t.Errorf("the session did not answer after the malformed lines: %q", agent)
	}
}

// TestACPRefusesRelativeCwd: ACP's cwd must be absolute. A relative one
// was taken against odin's own working directory (where the editor
// happened to start it), opening and storing a session in a project the
// editor never named; it is refused with invalid params, and nothing is
// stored there.
func TestACPRefusesRelativeCwd(t *testing.T) {
	env, root := acpEnv(t)
	// A working provider: without one no session would open anyway.
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &acpClient{answer: "once"}
	p, _ := startWired(t, env, root, c)
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{".", "proj", "../proj"} {
		_, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(fmt.Sprint(re.Data), "absolute") {
			t.Errorf("session/new with cwd %q: %v, want invalid params saying it must be absolute", cwd, err)
		}
	}
	if _, err := p.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: "x", Cwd: ".", McpServers: []sdk.McpServer{}}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("session/load with cwd \".\": %v, want it refused as not absolute", err)
	}
	list := exec.Command(filepath.Join(binDir, "odin"), "-C", root, "sessions")
	list.Env = env
	out, err := list.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No sessions yet") {
		t.Errorf("odin sessions in the editor's directory: %v\n%s", err, out)
	}
}

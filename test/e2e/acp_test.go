package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// acpClient is an editor as the Go SDK's client sees it: it records every
// session/update and answers permission requests with the option the test
// chose.
type acpClient struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	answer  sdk.PermissionOptionId
	asked   []sdk.RequestPermissionRequest
}

func (c *acpClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	c.mu.Unlock()
	return nil
}

func (c *acpClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, p)
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(c.answer)}, nil
}

func (c *acpClient) take() []sdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates
	c.updates = nil
	return u
}

func (c *acpClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (c *acpClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (c *acpClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (c *acpClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (c *acpClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (c *acpClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (c *acpClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// acpProcess is a running `odin acp` and the client connected to it.
type acpProcess struct {
	cmd    *exec.Cmd
	conn   *sdk.ClientSideConnection
	client *acpClient
	stdin  interface{ Close() error }
}

func startACP(t *testing.T, env []string, dir string) *acpProcess {
	t.Helper()
	c := &acpClient{answer: "once"}
	return startACPWith(t, env, dir, c, c)
}

// startACPWith starts `odin acp` with client as the editor; c is its
// recording part.
func startACPWith(t *testing.T, env []string, dir string, client sdk.Client, c *acpClient) *acpProcess {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "odin"), "acp")
	cmd.Env, cmd.Dir = env, dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &acpProcess{cmd: cmd, conn: sdk.NewClientSideConnection(client, in, out), client: c, stdin: in}
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("odin acp stderr:\n%s", stderr.String())
		}
	})
	return p
}

// stop closes stdin, as an editor does, and waits for odin to exit.
func (p *acpProcess) stop(t *testing.T) {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("odin acp exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Errorf("odin acp did not exit after stdin closed")
	}
}

func acpEnv(t *testing.T) (env []string, root string) {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(work, "proj")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "HOME="+filepath.Join(work, "home"), "XDG_STATE_HOME="+filepath.Join(work, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(work, "config"), "NO_COLOR=1")
	return env, root
}

// acpScript is the conversation both ACP tests run: a read with a
// streamed answer, a command that needs approval, a slow answer to cancel.
func acpScript(root string) *llmtest.Script {
	return llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "what is in main.go", ToolCalls: []llmtest.ToolCall{llmtest.Call("ReadFile", map[string]any{"file_path": root + "/main.go"})}},
		llmtest.Step{When: "package main", Text: "It is a Go main package."},
		llmtest.Step{When: "delete keep.txt", ToolCalls: []llmtest.ToolCall{llmtest.Call("ExecuteCommand", map[string]any{"command": "rm keep.txt"})}},
		llmtest.Step{When: "not approved", Text: "I was not allowed to."},
		llmtest.Step{When: "delete keep.txt now", ToolCalls: []llmtest.ToolCall{llmtest.Call("ExecuteCommand", map[string]any{"command": "rm keep.txt"})}},
		llmtest.Step{When: "Exit code", Text: "Deleted keep.txt."},
		llmtest.Step{When: "write notes", ToolCalls: []llmtest.ToolCall{llmtest.Call("WriteFile", map[string]any{"file_path": root + "/notes.txt", "content": "notes\n"})}},
		llmtest.Step{When: "Created", Text: "Wrote notes."},
		llmtest.Step{When: "take your time", Latency: llmtest.Duration(time.Minute), Text: "too late"},
		llmtest.Step{When: "take your time", Latency: llmtest.Duration(time.Minute), Text: "too late"},
		llmtest.Step{When: "after the restart", Text: "You asked about main.go."},
	)
}

func updatesText(us []sdk.SessionUpdate) (agent, user string, tools []*sdk.SessionUpdateToolCall, updates []*sdk.SessionToolCallUpdate) {
	var a, u strings.Builder
	for _, x := range us {
		switch {
		case x.AgentMessageChunk != nil && x.AgentMessageChunk.Content.Text != nil:
			a.WriteString(x.AgentMessageChunk.Content.Text.Text)
		case x.UserMessageChunk != nil && x.UserMessageChunk.Content.Text != nil:
			u.WriteString(x.UserMessageChunk.Content.Text.Text)
		case x.ToolCall != nil:
			tools = append(tools, x.ToolCall)
		case x.ToolCallUpdate != nil:
			updates = append(updates, x.ToolCallUpdate)
		}
	}
	return a.String(), u.String(), tools, updates
}

// TestACPGoClient drives `odin acp` with the Go SDK's client: initialize,
// session/new, prompts with streamed updates, a permission answered both
// ways, cancel, and session/load in a new process.
func TestACPGoClient(t *testing.T) {
	env, root := acpEnv(t)
	srv, err := llmtest.Serve("127.0.0.1:0", acpScript(root))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	writeFile(t, root, "main.go", "package main\n\nfunc main() {}\n")
	writeFile(t, root, "keep.txt", "keep\n")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := startACP(t, env, root)
	init, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.LoadSession {
		t.Error("loadSession capability not offered")
	}
	ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Modes == nil || ns.Modes.CurrentModeId != "edit" || len(ns.Modes.AvailableModes) != 3 {
		t.Errorf("modes = %+v, want ask/plan/edit with edit current", ns.Modes)
	}

	// A prompt streams the answer and the tool call with its location.
	resp, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("what is in main.go?")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	agent, _, tools, upd := updatesText(p.client.take())
	if agent != "It is a Go main package." {
		t.Errorf("streamed answer %q", agent)
	}
	if len(tools) != 1 || tools[0].Kind != sdk.ToolKindRead || len(tools[0].Locations) != 1 || tools[0].Locations[0].Path != filepath.Join(root, "main.go") {
		t.Errorf("tool calls = %+v, want one read of main.go", tools)
	}
	if len(upd) == 0 || upd[len(upd)-1].Status == nil || *upd[len(upd)-1].Status != sdk.ToolCallStatusCompleted {
		t.Errorf("tool call updates = %+v, want completed", upd)
	}

	// A command that needs approval is asked through session/request_permission;
	// rejected, the file stays.
	p.client.answer = "deny"
	if _, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("delete keep.txt")}}); err != nil {
		t.Fatal(err)
	}
	if len(p.client.asked) != 1 || !strings.Contains(*p.client.asked[0].ToolCall.Title, "rm keep.txt") {
		t.Fatalf("permission requests = %+v, want one about rm keep.txt", p.client.asked)
	}
	if _, err := os.Stat(filepath.Join(root, "keep.txt")); err != nil {
		t.Fatalf("keep.txt is gone after the user rejected its deletion: %v", err)
	}
	p.client.take()

	// Allowed once, it runs.
	p.client.answer = "once"
	if _, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("delete keep.txt now")}}); err != nil {
		t.Fatal(err)
	}
	if len(p.client.asked) != 2 {
		t.Fatalf("%d permission requests, want 2", len(p.client.asked))
	}
	if _, err := os.Stat(filepath.Join(root, "keep.txt")); !os.IsNotExist(err) {
		t.Fatalf("keep.txt still there after the user allowed its deletion: %v", err)
	}
	if agent, _, _, _ := updatesText(p.client.take()); agent != "Deleted keep.txt." {
		t.Errorf("answer %q", agent)
	}

	// Cancel: a slow turn ends with stopReason cancelled.
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		r, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("take your time")}})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	waitRequests(t, srv, 7)
	if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: ns.SessionId}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("cancelled prompt stop reason %q", r.StopReason)
	}
	p.stop(t)

	// session/load in a new process replays the history.
	p2 := startACP(t, env, root)
	if _, err := p2.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: ns.SessionId, Cwd: root, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	agent, user, tools, _ := updatesText(p2.client.take())
	if !strings.Contains(user, "what is in main.go?") || !strings.Contains(user, "delete keep.txt") {
		t.Errorf("replayed user messages %q", user)
	}
	if !strings.Contains(agent, "It is a Go main package.") {
		t.Errorf("replayed answers %q", agent)
	}
	if len(tools) < 2 {
		t.Errorf("replayed %d tool calls, want the ReadFile and the ExecuteCommand", len(tools))
	}
}

func writeFile(t *testing.T, root, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitRequests waits until the model server has received n requests.
func waitRequests(t *testing.T, srv *llmtest.Server, n int) {
	t.Helper()
	for range 400 {
		if len(srv.RequestsFor("orchestrator")) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the model server got %d requests, want %d", len(srv.RequestsFor("orchestrator")), n)
}

// bufferClient is an editor with open buffers: it offers fs/read_text_file
// (unsaved edits included) and fs/write_text_file (to the buffer and the
// disk), and records the paths it was asked about.
type bufferClient struct {
	*acpClient
	fmu     sync.Mutex
	buffers map[string]string
	reads   []string
	writes  []string
}

func (c *bufferClient) ReadTextFile(_ context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	c.reads = append(c.reads, r.Path)
	b, ok := c.buffers[r.Path]
	if !ok {
		raw, err := os.ReadFile(r.Path)
		if err != nil {
			return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(err.Error())
		}
		b = string(raw)
	}
	return sdk.ReadTextFileResponse{Content: b}, nil
}

func (c *bufferClient) WriteTextFile(_ context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	c.writes = append(c.writes, r.Path)
	c.buffers[r.Path] = r.Content
	return sdk.WriteTextFileResponse{}, os.WriteFile(r.Path, []byte(r.Content), 0o644)
}

// TestACPEditorBuffersAndMCPServers: with a client that offers fs methods,
// the model reads the editor's unsaved buffer and Odin's writes go through
// the editor; an MCP server the client declares in session/new is started
// by Odin's MCP client, and its tool is used, with the secret the editor
// gave it and no other.
func TestACPEditorBuffersAndMCPServers(t *testing.T) {
	env, root := acpEnv(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fixture := filepath.Join(filepath.Dir(root), "mcp-fixture")
	if err := os.Symlink(exe, fixture); err != nil {
		t.Fatal(err)
	}
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "what is in main.go", ToolCalls: []llmtest.ToolCall{llmtest.Call("ReadFile", map[string]any{"file_path": root + "/main.go"})}},
		llmtest.Step{When: "unsaved edit", Text: "It prints from the buffer."},
		llmtest.Step{When: "ask the fixture", ToolCalls: []llmtest.ToolCall{llmtest.Call("mcp__fix__probe", map[string]any{"env": []string{"FIXTURE_TOKEN", "OPENAI_API_KEY"}})}},
		llmtest.Step{When: "FIXTURE_TOKEN", Text: "Probed."},
		llmtest.Step{When: "write notes", ToolCalls: []llmtest.ToolCall{llmtest.Call("WriteFile", map[string]any{"file_path": root + "/notes.txt", "content": "notes\n"})}},
		llmtest.Step{When: "Created", Text: "Wrote notes."},
	)
	srv, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=sk-odin-provider-key")
	writeFile(t, root, "main.go", "package main\n\nfunc main() {}\n")

	c := &bufferClient{acpClient: &acpClient{answer: "once"}, buffers: map[string]string{
		filepath.Join(root, "main.go"): "package main\n\n// an unsaved edit\nfunc main() { println(1) }\n",
	}}
	p := startACPWith(t, env, root, c, c.acpClient)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	init, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.McpCapabilities.Http {
		t.Errorf("mcpCapabilities = %+v, want http", init.AgentCapabilities.McpCapabilities)
	}
	ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{{Stdio: &sdk.McpServerStdio{
		Name: "fix", Command: fixture, Args: []string{}, Env: []sdk.EnvVariable{{Name: "FIXTURE_TOKEN", Value: "editor-given-token"}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := func(text string) string {
		t.Helper()
		if _, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}}); err != nil {
			t.Fatal(err)
		}
		agent, _, _, _ := updatesText(p.client.take())
		return agent
	}

	// The model sees the buffer, not the disk.
	if got := prompt("what is in main.go?"); got != "It prints from the buffer." {
		t.Errorf("answer %q", got)
	}
	reqs := srv.RequestsFor("orchestrator")
	if body := string(reqs[len(reqs)-1].Raw); !strings.Contains(body, "an unsaved edit") {
		t.Errorf("the ReadFile result lacks the editor's unsaved edit:\n%.3000s", body)
	}

	// The editor's MCP server runs and gets the editor's secret; Odin's
	// provider key never reaches it.
	if got := prompt("ask the fixture"); got != "Probed." {
		t.Errorf("answer %q", got)
	}
	reqs = srv.RequestsFor("orchestrator")
	body := string(reqs[len(reqs)-1].Raw)
	if !strings.Contains(body, "editor-given-token") {
		t.Errorf("the editor's MCP server did not get its declared env:\n%.3000s", body)
	}
	if strings.Contains(body, "sk-odin-provider-key") {
		t.Errorf("the provider key reached the editor's MCP server")
	}

	// A write goes through the editor.
	if got := prompt("write notes"); got != "Wrote notes." {
		t.Errorf("answer %q", got)
	}
	c.fmu.Lock()
	writes := slices.Clone(c.writes)
	c.fmu.Unlock()
	if !slices.Contains(writes, filepath.Join(root, "notes.txt")) {
		t.Errorf("fs/write_text_file calls %v, want notes.txt", writes)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(b) != "notes\n" {
		t.Errorf("notes.txt = %q", b)
	}
}

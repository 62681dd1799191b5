package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
)

// wireMsg is one JSON-RPC message as it crossed the pipe.
type wireMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// update is a session/update's update, the fields the tests read.
type update struct {
	Kind       string `json:"sessionUpdate"`
	ToolCallID string `json:"toolCallId"`
	ToolKind   string `json:"kind"`
	Status     string `json:"status"`
	Content    any    `json:"content"`
	Locations  []struct {
		Path string `json:"path"`
	} `json:"locations"`
	Entries       []any  `json:"entries"`
	CurrentModeID string `json:"currentModeId"`
	AvailableCmds []struct {
		Name string `json:"name"`
	} `json:"availableCommands"`
}

func (m wireMsg) update() (update, bool) {
	if m.Method != "session/update" {
		return update{}, false
	}
	var p struct {
		Update update `json:"update"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return update{}, false
	}
	return p.Update, true
}

// text is an agent_message_chunk's text.
func (u update) text() string {
	if c, ok := u.Content.(map[string]any); ok {
		if s, ok := c["text"].(string); ok {
			return s
		}
	}
	return ""
}

// wire records every message on both pipes of an `odin acp`, in the order
// each side wrote them: what the SDK client does with them (it holds a
// response back until the notifications before it are handled) cannot
// hide an order the agent got wrong.
type wire struct {
	mu       sync.Mutex
	got      []wireMsg         // agent → client
	requests map[string]string // client's request id → method
	changed  chan struct{}
}

func newWire() *wire {
	return &wire{requests: map[string]string{}, changed: make(chan struct{})}
}

// tap copies the agent's output to the returned reader, recording each line
// before the client sees it.
func (w *wire) tap(t *testing.T, out io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
		for sc.Scan() {
			var m wireMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err == nil {
				w.mu.Lock()
				w.got = append(w.got, m)
				close(w.changed)
				w.changed = make(chan struct{})
				w.mu.Unlock()
			}
			if _, err := pw.Write(append(sc.Bytes(), '\n')); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}

// sent records the client's requests by id as they are written.
type sentTap struct {
	w  *wire
	to io.WriteCloser
}

func (s sentTap) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m wireMsg
		if json.Unmarshal([]byte(line), &m) == nil && m.Method != "" && len(m.ID) > 0 {
			s.w.mu.Lock()
			s.w.requests[string(m.ID)] = m.Method
			s.w.mu.Unlock()
		}
	}
	return s.to.Write(b)
}

func (s sentTap) Close() error { return s.to.Close() }

func (w *wire) snapshot() []wireMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]wireMsg(nil), w.got...)
}

// isResponseTo reports whether m answers one of the client's method calls.
func (w *wire) isResponseTo(m wireMsg, method string) bool {
	if m.Method != "" || len(m.ID) == 0 {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.requests[string(m.ID)] == method
}

// waitFor returns the index of the first message from index from on that
// satisfies ok, waiting for it until ctx ends.
func (w *wire) waitFor(ctx context.Context, t *testing.T, from int, what string, ok func(wireMsg) bool) int {
	t.Helper()
	for {
		w.mu.Lock()
		for i := from; i < len(w.got); i++ {
			if ok(w.got[i]) {
				w.mu.Unlock()
				return i
			}
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}
}

// startWired starts `odin acp` with client as the editor and every message
// recorded on the returned wire.
func startWired(t *testing.T, env []string, dir string, client sdk.Client) (*acpProcess, *wire) {
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
	w := newWire()
	stdin := sentTap{w: w, to: in}
	p := &acpProcess{cmd: cmd, conn: sdk.NewClientSideConnection(client, stdin, w.tap(t, out)), stdin: stdin}
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("odin acp stderr:\n%s", stderr.String())
		}
	})
	return p, w
}

// wiredSession starts odin, initializes with the fs methods offered or
// not, and opens a session in root.
func wiredSession(ctx context.Context, t *testing.T, env []string, root string, client sdk.Client, fs bool) (*acpProcess, *wire, sdk.SessionId) {
	t.Helper()
	p, w := startWired(t, env, root, client)
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: fs, WriteTextFile: fs}}}); err != nil {
		t.Fatal(err)
	}
	ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return p, w, ns.SessionId
}

func prompt(text string) []sdk.ContentBlock { return []sdk.ContentBlock{sdk.TextBlock(text)} }

// TestACPQueuedPromptsAnsweredInOrder, 20 rounds on one session: a second
// prompt sent while the first runs waits in the queue; the first is not
// cancelled, and both are answered, in order, each after its own answer
// streamed and before anything of the next turn (the second turn starts
// the moment the first ends, while the SDK writes the first response only
// after its handler returns).
func TestACPQueuedPromptsAnsweredInOrder(t *testing.T) {
	const rounds = 20
	env, root := acpEnv(t)
	var steps []llmtest.Step
	for r := range rounds {
		steps = append(steps,
			llmtest.Step{When: fmt.Sprintf("first question (%d)", r), Hold: fmt.Sprintf("first-%d", r), Text: fmt.Sprintf("first answer (%d)", r)},
			llmtest.Step{When: fmt.Sprintf("second question (%d)", r), Text: fmt.Sprintf("second answer (%d)", r)})
	}
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator", steps...))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p, w, sid := wiredSession(ctx, t, env, root, &acpClient{answer: "once"}, false)

	type answer struct {
		r   sdk.PromptResponse
		err error
	}
	var want []string
	for r := range rounds {
		first, second := make(chan answer, 1), make(chan answer, 1)
		go func() {
			res, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: prompt(fmt.Sprintf("first question (%d)", r))})
			first <- answer{res, err}
		}()
		if err := srv.WaitHeld(ctx, fmt.Sprintf("first-%d", r)); err != nil {
			t.Fatal(err)
		}
		go func() {
			res, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: prompt(fmt.Sprintf("second question (%d)", r))})
			second <- answer{res, err}
		}()
		// The first turn's model reply is held: nothing may answer the
		// first prompt now (before the queue fix the second prompt
		// cancelled it at once). The first round watches for it; later
		// ones only give the second prompt time to reach the queue, so
		// that the second turn starts the moment the first ends.
		settle := 200 * time.Millisecond
		if r == 0 {
			settle = 2 * time.Second
		}
		select {
		case a := <-first:
			t.Fatalf("round %d: the first prompt was answered (%+v, %v) while its model reply was held: the second prompt cancelled it", r, a.r, a.err)
		case <-time.After(settle):
		}
		srv.Release(fmt.Sprintf("first-%d", r))
		a1, a2 := <-first, <-second
		if a1.err != nil || a1.r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("round %d: first prompt: %+v, %v; want end_turn", r, a1.r, a1.err)
		}
		if a2.err != nil || a2.r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("round %d: second prompt: %+v, %v; want end_turn", r, a2.r, a2.err)
		}
		want = append(want, fmt.Sprintf("first answer (%d)", r), fmt.Sprintf("second answer (%d)", r))
	}
	// On the wire: each answer's text, then its prompt's response, before
	// any text of the next.
	var seq []string
	var text strings.Builder
	for _, m := range w.snapshot() {
		if u, ok := m.update(); ok && u.Kind == "agent_message_chunk" {
			text.WriteString(u.text())
		}
		if w.isResponseTo(m, "session/prompt") {
			seq = append(seq, text.String())
			text.Reset()
		}
	}
	if diff := cmp.Diff(want, seq); diff != "" {
		t.Errorf("text streamed before each prompt response (-want +got):\n%s", diff)
	}
	reqs := srv.RequestsFor("orchestrator")
	if len(reqs) != 2*rounds {
		t.Fatalf("the model got %d requests, want %d", len(reqs), 2*rounds)
	}
	for r := range rounds {
		if !strings.Contains(string(reqs[2*r+1].Raw), fmt.Sprintf("first answer (%d)", r)) {
			t.Errorf("round %d: the second request does not follow the first's answer", r)
		}
	}
}

// TestACPPermissionNamesTheToolCall: session/request_permission carries the
// tool call's own id — the one its tool_call announced before it and its
// updates use — so an editor shows the question on that call's card.
func TestACPPermissionNamesTheToolCall(t *testing.T) {
	env, root := acpEnv(t)
	writeFile(t, root, "keep.txt", "keep\n")
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "delete keep.txt", ToolCalls: []llmtest.ToolCall{{ID: "call_rm_1", Name: "ExecuteCommand", Arguments: llmtest.Args(map[string]any{"command": "rm keep.txt"})}}},
		llmtest.Step{When: "Exit code", Text: "Deleted keep.txt."},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &acpClient{answer: "once"}
	p, w, sid := wiredSession(ctx, t, env, root, c, false)
	if _, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: prompt("delete keep.txt")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "keep.txt")); !os.IsNotExist(err) {
		t.Fatalf("keep.txt still there after the user allowed its deletion: %v", err)
	}
	ids := map[string][]string{}
	announced := -1
	asked := 0
	for i, m := range w.snapshot() {
		if u, ok := m.update(); ok && u.ToolCallID != "" {
			ids[u.ToolCallID] = append(ids[u.ToolCallID], u.Kind)
			if u.Kind == "tool_call" && announced < 0 {
				announced = i
			}
		}
		if m.Method == "session/request_permission" {
			asked++
			var rp sdk.RequestPermissionRequest
			if err := json.Unmarshal(m.Params, &rp); err != nil {
				t.Fatal(err)
			}
			if rp.ToolCall.ToolCallId != "call_rm_1" {
				t.Errorf("permission asked for tool call %q, want the model's call call_rm_1", rp.ToolCall.ToolCallId)
			}
			if announced < 0 || announced > i {
				t.Errorf("the permission request (message %d) came before the tool_call announcing its call (%d)", i, announced)
			}
			ids[string(rp.ToolCall.ToolCallId)] = append(ids[string(rp.ToolCall.ToolCallId)], "permission")
		}
	}
	if asked != 1 {
		t.Fatalf("%d permission requests, want 1", asked)
	}
	if len(ids) != 1 || len(ids["call_rm_1"]) < 3 {
		t.Errorf("tool call ids on the wire = %v, want one id (call_rm_1) for the announcement, the permission and the updates", ids)
	}
}

// TestACPUpdatesPrecedeResponses, 20 rounds on one session with an editor
// that offers its buffers: a tool's fs/read_text_file and
// fs/write_text_file reach the client after the tool_call announcing that
// tool; every tool call of a turn has its final update before the turn's
// response, a cancelled turn's too; and nothing of a turn follows its
// response.
func TestACPUpdatesPrecedeResponses(t *testing.T) {
	const rounds = 20
	env, root := acpEnv(t)
	writeFile(t, root, "main.go", "package main\n\nfunc main() {}\n")
	var steps []llmtest.Step
	for i := range rounds {
		steps = append(steps, roundSteps(root, i)...)
	}
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator", steps...))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := &bufferClient{acpClient: &acpClient{answer: "once"}, buffers: map[string]string{}}
	p, w, sid := wiredSession(ctx, t, env, root, c, true)

	for i := range rounds {
		from := len(w.snapshot())
		r, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: prompt(fmt.Sprintf("round %d files", i))})
		if err != nil || r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("round %d: %+v, %v", i, r, err)
		}
		checkTurnOrder(t, w, from, fmt.Sprintf("round %d", i), 2, true)

		from = len(w.snapshot())
		slow := make(chan sdk.PromptResponse, 1)
		go func() {
			r, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: prompt(fmt.Sprintf("round %d slow", i))})
			if err != nil {
				t.Errorf("round %d slow: %v", i, err)
			}
			slow <- r
		}()
		w.waitFor(ctx, t, from, "the command's tool_call", func(m wireMsg) bool {
			u, ok := m.update()
			return ok && u.Kind == "tool_call" && u.ToolKind == "execute"
		})
		if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sid}); err != nil {
			t.Fatal(err)
		}
		if r := <-slow; r.StopReason != sdk.StopReasonCancelled {
			t.Fatalf("round %d: cancelled prompt answered %q", i, r.StopReason)
		}
		checkTurnOrder(t, w, from, fmt.Sprintf("round %d cancelled", i), 1, false)
		if t.Failed() {
			return
		}
	}
	// Late updates of a turn would show after the last response too: a
	// round trip later, nothing about an earlier call has arrived.
	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sid, ModeId: "edit"}); err != nil {
		t.Fatal(err)
	}
	all := w.snapshot()
	last := -1
	for i, m := range all {
		if w.isResponseTo(m, "session/prompt") {
			last = i
		}
	}
	for _, m := range all[last+1:] {
		if u, ok := m.update(); ok && u.ToolCallID != "" {
			t.Errorf("after the last response: %s of %s", u.Kind, u.ToolCallID)
		}
	}
}

// roundSteps are the model's steps of one ordering round: a read and a
// write ("round N files"), their answer, and a command slow enough to be
// cancelled ("round N slow").
func roundSteps(root string, i int) []llmtest.Step {
	return []llmtest.Step{
		{When: fmt.Sprintf("round %d files", i), ToolCalls: []llmtest.ToolCall{
			llmtest.Call("ReadFile", map[string]any{"file_path": root + "/main.go"}),
			llmtest.Call("WriteFile", map[string]any{"file_path": fmt.Sprintf("%s/notes-%d.txt", root, i), "content": fmt.Sprintf("notes %d\n", i)}),
		}},
		{When: fmt.Sprintf("notes-%d.txt:", i), Text: fmt.Sprintf("round %d written.", i)},
		{When: fmt.Sprintf("round %d slow", i), ToolCalls: []llmtest.ToolCall{
			llmtest.Call("ExecuteCommand", map[string]any{"command": "sleep 60"}),
		}},
	}
}

// checkTurnOrder checks the messages of one turn, from index from to its
// prompt response: each fs request follows the tool_call of a call that is
// still open, every announced call (calls of them) is finished before the
// response, and fs requests were made when fs is set.
func checkTurnOrder(t *testing.T, w *wire, from int, what string, calls int, fs bool) {
	t.Helper()
	msgs := w.snapshot()[from:]
	open := map[string]string{} // id → path
	announced := 0
	fsRequests := 0
	for _, m := range msgs {
		if w.isResponseTo(m, "session/prompt") {
			if announced != calls {
				t.Errorf("%s: %d tool calls announced before the response, want %d", what, announced, calls)
			}
			for id := range open {
				t.Errorf("%s: tool call %s had no final update before the turn's response", what, id)
			}
			if fs && fsRequests < 2 {
				t.Errorf("%s: %d fs requests, want a read and a write", what, fsRequests)
			}
			return
		}
		if u, ok := m.update(); ok && u.ToolCallID != "" {
			switch {
			case u.Kind == "tool_call":
				announced++
				path := ""
				if len(u.Locations) > 0 {
					path = u.Locations[0].Path
				}
				open[u.ToolCallID] = path
			case u.Status == "completed" || u.Status == "failed":
				delete(open, u.ToolCallID)
			}
		}
		if m.Method == "fs/read_text_file" || m.Method == "fs/write_text_file" {
			fsRequests++
			var p struct {
				Path string `json:"path"`
			}
			_ = json.Unmarshal(m.Params, &p)
			found := false
			for _, path := range open {
				found = found || path == p.Path
			}
			if !found {
				t.Errorf("%s: %s %s reached the client before the tool_call announcing its call", what, m.Method, p.Path)
			}
		}
	}
	t.Errorf("%s: no prompt response in the messages", what)
}

// TestACPModeAndTranscriptSurviveLoad: a mode set with session/set_mode is
// the session's mode after session/load in a new process, and the load
// replays the model's reasoning, the plan and the diff of an edit.
func TestACPModeAndTranscriptSurviveLoad(t *testing.T) {
	env, root := acpEnv(t)
	notes := root + "/notes.txt"
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "plan the notes", Reasoning: "The notes need a plan first.", ToolCalls: []llmtest.ToolCall{
			llmtest.Call("TodoWrite", map[string]any{"todos": []map[string]any{{"id": "1", "content": "write the notes", "status": "in_progress"}}}),
		}},
		llmtest.Step{When: "write the notes", ToolCalls: []llmtest.ToolCall{
			llmtest.Call("WriteFile", map[string]any{"file_path": notes, "content": "first line\n"}),
			// The plan done before the answer: an answer with items still
			// open is sent back (the progress frontier's refusal).
			llmtest.Call("TodoWrite", map[string]any{"todos": []map[string]any{{"id": "1", "content": "write the notes", "status": "completed"}}}),
		}},
		llmtest.Step{When: "notes.txt:", Text: "Planned and wrote the notes."},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, _, sid := wiredSession(ctx, t, env, root, &acpClient{answer: "once"}, false)
	if r, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: prompt("plan the notes")}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", r, err)
	}
	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sid, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	p.stop(t)

	p2, w2 := startWired(t, env, root, &acpClient{answer: "once"})
	if _, err := p2.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	lr, err := p2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sid, Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if lr.Modes == nil || lr.Modes.CurrentModeId != "plan" {
		t.Errorf("mode after load = %+v, want plan", lr.Modes)
	}
	var thought, diff, plan bool
	for _, m := range w2.snapshot() {
		u, ok := m.update()
		if !ok {
			continue
		}
		switch u.Kind {
		case "agent_thought_chunk":
			thought = thought || strings.Contains(u.text(), "The notes need a plan first.")
		case "plan":
			plan = plan || len(u.Entries) == 1
		case "tool_call_update":
			b, _ := json.Marshal(u.Content)
			diff = diff || (strings.Contains(string(b), `"type":"diff"`) && strings.Contains(string(b), "first line"))
		}
	}
	if !thought || !plan || !diff {
		t.Errorf("replayed: reasoning %v, plan %v, diff %v; want all", thought, plan, diff)
	}
}

// TestACPCommandsListAndSessionLifecycle: after the session/new response
// the client gets available_commands_update with Odin's compact and the
// project's custom commands; "/name args" runs one (its expanded prompt
// reaches the model), "/compact" compacts; session/list lists the stored
// session, session/close closes it and session/resume reopens it in a new
// process without replaying it.
func TestACPCommandsListAndSessionLifecycle(t *testing.T) {
	env, root := acpEnv(t)
	if err := os.MkdirAll(filepath.Join(root, ".odin", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ".odin", "commands"), "review.md",
		"---\ndescription: review a file for bugs\nargument-hint: FILE\n---\nReview $ARGUMENTS for bugs and say which.\n")
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "Review main.go for bugs and say which.", Text: "No bugs in main.go."},
		llmtest.Step{When: "still there", Text: "Yes."},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, w := startWired(t, env, root, &acpClient{answer: "once"})
	init, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if sc := init.AgentCapabilities.SessionCapabilities; sc.List == nil || sc.Resume == nil || sc.Close == nil {
		t.Errorf("sessionCapabilities = %+v, want list, resume and close", sc)
	}
	ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	i := w.waitFor(ctx, t, 0, "available_commands_update", func(m wireMsg) bool {
		u, ok := m.update()
		return ok && u.Kind == "available_commands_update"
	})
	var names []string
	u, _ := w.snapshot()[i].update()
	for _, c := range u.AvailableCmds {
		names = append(names, c.Name)
	}
	if fmt.Sprint(names) != "[compact review]" {
		t.Errorf("commands = %v, want [compact review]", names)
	}
	responded := -1
	for j, m := range w.snapshot() {
		if w.isResponseTo(m, "session/new") {
			responded = j
		}
	}
	if responded < 0 || responded > i {
		t.Errorf("available_commands_update (message %d) came before the session/new response (%d) that names the session", i, responded)
	}

	r, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: prompt("/review main.go")})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("/review: %+v, %v", r, err)
	}
	if reqs := srv.RequestsFor("orchestrator"); len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), "Review main.go for bugs and say which.") {
		t.Errorf("the model did not get the expanded command (%d requests)", len(reqs))
	}
	// The turn's usage is in its response; the context's fill and the
	// session's title arrive as updates before it.
	if r.Usage == nil || r.Usage.InputTokens == 0 || r.Usage.TotalTokens == 0 {
		t.Errorf("prompt response usage = %+v, want the turn's tokens", r.Usage)
	}
	var title string
	var used, size int
	for _, m := range w.snapshot() {
		var p struct {
			Update struct {
				Kind  string `json:"sessionUpdate"`
				Title string `json:"title"`
				Used  int    `json:"used"`
				Size  int    `json:"size"`
			} `json:"update"`
		}
		if m.Method != "session/update" || json.Unmarshal(m.Params, &p) != nil {
			continue
		}
		switch p.Update.Kind {
		case "session_info_update":
			title = p.Update.Title
		case "usage_update":
			used, size = p.Update.Used, p.Update.Size
		}
	}
	if !strings.Contains(title, "Review main.go") {
		t.Errorf("session title update %q, want the first prompt's line", title)
	}
	if used <= 0 || size <= used {
		t.Errorf("usage_update used %d of %d, want the context's tokens of the model's window", used, size)
	}
	from := len(w.snapshot())
	if r, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: prompt("/compact")}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("/compact: %+v, %v", r, err)
	}
	var said strings.Builder
	for _, m := range w.snapshot()[from:] {
		if u, ok := m.update(); ok && u.Kind == "agent_message_chunk" {
			said.WriteString(u.text())
		}
	}
	if !strings.Contains(said.String(), "ompact") {
		t.Errorf("/compact answered %q", said.String())
	}
	if n := len(srv.RequestsFor("orchestrator")); n != 1 {
		t.Errorf("/compact went to the orchestrator model as a prompt (%d requests)", n)
	}

	list, err := p.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(root)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != ns.SessionId || list.Sessions[0].Cwd != root {
		t.Errorf("session/list = %+v, want the one session in %s", list.Sessions, root)
	}
	if _, err := p.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: ns.SessionId}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: prompt("hello")}); err == nil {
		t.Error("a prompt on a closed session was accepted")
	}
	p.stop(t)

	p2, w2 := startWired(t, env, root, &acpClient{answer: "once"})
	if _, err := p2.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: ns.SessionId, Cwd: root, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range w2.snapshot() {
		if u, ok := m.update(); ok && (u.Kind == "user_message_chunk" || u.Kind == "agent_message_chunk") {
			t.Errorf("session/resume replayed %s", u.Kind)
		}
	}
	if r, err := p2.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: prompt("still there?")}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt after resume: %+v, %v", r, err)
	}
	reqs := srv.RequestsFor("orchestrator")
	if !strings.Contains(string(reqs[len(reqs)-1].Raw), "No bugs in main.go.") {
		t.Error("the resumed session's model request lacks the earlier answer")
	}
}

// TestACPModelSelection: session/new offers the configured models with the
// main one current, and the mode and model as config options;
// session/set_model switches the Orchestrator's model from the next turn,
// and an unknown model is refused; the config options and the legacy mode
// follow each other. The choice is the session's: session/load in a new
// process starts in it (and its turns ask it), while a new session there
// starts in the configured model.
func TestACPModelSelection(t *testing.T) {
	env, root := acpEnv(t)
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "hello", Text: "Hi."},
		llmtest.Step{When: "after the load", Text: "Still here."},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, w := startWired(t, env, root, &acpClient{answer: "once"})
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := configValues(ns.ConfigOptions); fmt.Sprint(got) != "map[mode:edit model:gpt-4o]" {
		t.Errorf("config options of a new session = %v, want mode edit and model gpt-4o", got)
	}
	var ids []string
	if ns.Models != nil {
		for _, m := range ns.Models.AvailableModels {
			ids = append(ids, string(m.ModelId))
		}
	}
	if ns.Models == nil || ns.Models.CurrentModelId != "gpt-4o" || len(ids) < 2 || fmt.Sprint(ids[:2]) != "[gpt-4o gpt-4o-mini]" {
		t.Fatalf("models = %v, want gpt-4o current, then gpt-4o-mini, then the model_info ones", ids)
	}
	if _, err := p.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: ns.SessionId, ModelId: "no-such-model"}); err == nil {
		t.Error("an unknown model was accepted")
	}
	from := len(w.snapshot())
	if _, err := p.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: ns.SessionId, ModelId: "gpt-4o-mini"}); err != nil {
		t.Fatal(err)
	}
	// The model config option follows session/set_model; a mode set as
	// a config option is told as the legacy mode too.
	w.waitFor(ctx, t, from, "config_option_update with gpt-4o-mini", func(m wireMsg) bool {
		return m.Method == "session/update" && strings.Contains(string(m.Params), `"config_option_update"`) && strings.Contains(string(m.Params), `"currentValue":"gpt-4o-mini"`)
	})
	from = len(w.snapshot())
	set, err := p.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: ns.SessionId, ConfigId: "mode", Value: "ask"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := configValues(set.ConfigOptions); fmt.Sprint(got) != "map[mode:ask model:gpt-4o-mini]" {
		t.Errorf("config options after setting the mode = %v", got)
	}
	w.waitFor(ctx, t, from, "current_mode_update to ask", func(m wireMsg) bool {
		u, ok := m.update()
		return ok && u.Kind == "current_mode_update" && u.CurrentModeID == "ask"
	})
	if _, err := p.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: ns.SessionId, ConfigId: "mode", Value: "yolo"}}); err == nil {
		t.Error("mode yolo was accepted")
	}
	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: "edit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: prompt("hello")}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.RequestsFor("orchestrator")
	var body struct {
		Model string `json:"model"`
	}
	if len(reqs) != 1 || json.Unmarshal(reqs[0].Raw, &body) != nil || body.Model != "gpt-4o-mini" {
		t.Errorf("the Orchestrator asked model %q, want gpt-4o-mini", body.Model)
	}
	p.stop(t)

	p2, _ := startWired(t, env, root, &acpClient{answer: "once"})
	if _, err := p2.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	lr, err := p2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: ns.SessionId, Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if lr.Models == nil || lr.Models.CurrentModelId != "gpt-4o-mini" {
		t.Errorf("model after load = %+v, want gpt-4o-mini", lr.Models)
	}
	if got := configValues(lr.ConfigOptions); fmt.Sprint(got) != "map[mode:edit model:gpt-4o-mini]" {
		t.Errorf("config options after load = %v, want mode edit and model gpt-4o-mini", got)
	}
	other, err := p2.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if other.Models == nil || other.Models.CurrentModelId != "gpt-4o" {
		t.Errorf("a new session beside the loaded one starts in %+v, want the configured gpt-4o", other.Models)
	}
	if _, err := p2.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: prompt("after the load")}); err != nil {
		t.Fatal(err)
	}
	reqs = srv.RequestsFor("orchestrator")
	body.Model = ""
	if len(reqs) != 2 || json.Unmarshal(reqs[1].Raw, &body) != nil || body.Model != "gpt-4o-mini" {
		t.Errorf("after the load the Orchestrator asked model %q (%d requests), want gpt-4o-mini", body.Model, len(reqs))
	}
}

// TestACPSessionListPages: session/list with more stored sessions than
// one response holds pages through them with nextCursor, most recently
// updated first, each of the project's sessions once (page boundaries
// inside runs of equal update times included); a session created while
// the client pages moves nothing on the later pages; a cursor the agent
// did not make is refused.
func TestACPSessionListPages(t *testing.T) {
	env, root := acpEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The store odin acp opens (XDG_STATE_HOME/odin/odin.db), seeded as
	// earlier runs would have left it.
	st, err := store.OpenURL(ctx, filepath.Join(filepath.Dir(root), "state", "odin", "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	other := filepath.Join(filepath.Dir(root), "other")
	base := time.Now().Add(-time.Hour)
	const seeded = 123
	for i := range seeded {
		// Three by three the same update time.
		at := base.Add(time.Duration(i/3) * time.Second)
		if _, err := st.CreateSession(ctx, store.Session{Project: root, Agent: store.AgentOrchestrator, Title: fmt.Sprintf("session %d", i), CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		if i%40 == 0 {
			if _, err := st.CreateSession(ctx, store.Session{Project: other, Agent: store.AgentOrchestrator, CreatedAt: at, UpdatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
	}
	stored, err := st.Sessions(ctx, store.SessionQuery{Project: root})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range stored {
		want = append(want, s.ID)
	}

	p, _ := startWired(t, env, root, &acpClient{answer: "once"})
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	var got []string
	pages := 0
	req := sdk.ListSessionsRequest{Cwd: sdk.Ptr(root)}
	for {
		r, err := p.conn.ListSessions(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(r.Sessions) == 0 {
			t.Fatalf("page %d is empty", pages)
		}
		for _, s := range r.Sessions {
			if s.Cwd != root {
				t.Errorf("session %s of %s listed for %s", s.SessionId, s.Cwd, root)
			}
			got = append(got, string(s.SessionId))
		}
		if pages == 1 {
			// Newer than every seeded one: it goes to the front, which
			// the client has read already.
			if _, err := st.CreateSession(ctx, store.Session{Project: root, Agent: store.AgentOrchestrator}); err != nil {
				t.Fatal(err)
			}
		}
		if r.NextCursor == nil {
			break
		}
		if pages > seeded {
			t.Fatal("session/list pages without end")
		}
		req.Cursor = r.NextCursor
	}
	if pages < 2 {
		t.Errorf("%d sessions came in %d page(s): no paging", seeded, pages)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paged sessions (-want +got):\n%s", diff)
	}
	if _, err := p.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(root), Cursor: sdk.Ptr("not-a-cursor")}); err == nil {
		t.Error("a cursor odin never made was accepted")
	}
	// Without cwd, every project's sessions: the seeded ones, the new one
	// and the other project's four.
	n := 0
	req = sdk.ListSessionsRequest{}
	for {
		r, err := p.conn.ListSessions(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		n += len(r.Sessions)
		if r.NextCursor == nil {
			break
		}
		req.Cursor = r.NextCursor
	}
	if n != seeded+1+4 {
		t.Errorf("session/list without cwd listed %d sessions, want %d", n, seeded+1+4)
	}
}

// configValues are the current values of session config options by id.
func configValues(opts []sdk.SessionConfigOption) map[string]string {
	out := map[string]string{}
	for _, o := range opts {
		if o.Select != nil {
			out[string(o.Select.Id)] = string(o.Select.CurrentValue)
		}
	}
	return out
}

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestMCPEverythingThroughServe drives npm's server-everything, started
// as its README says (npx -y @modelcontextprotocol/server-everything),
// through odin serve, as an API client answering for the user would:
//   - its form (trigger-elicitation-request) arrives as an
//     elicitation_requested event; an answer outside the schema is refused
//     with 400 and the request stays; the accepted answer reaches the
//     server with the schema's defaults for the fields left out;
//   - its sampling request (trigger-sampling-request) is answered by the
//     scripted small model, the server allowed to sample in the user's
//     config;
//   - its research tool, which runs only as an MCP task, succeeds, its
//     status messages shown live as notices, and the question the task
//     asks on the way (ambiguous topic) is answered through the API too.
func TestMCPEverythingThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node servers")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: the sandbox these servers run in is tested in internal/sandbox")
	}
	cache := npxCache(t)
	env, root := acpEnv(t)
	work := filepath.Dir(root)
	cfg := fmt.Sprintf(`mcp:
  connect_timeout: 120s
  servers:
    everything:
      command: npx
      args: ["-y", "@modelcontextprotocol/server-everything"]
      env: {npm_config_cache: %q, npm_config_prefer_offline: "true", npm_config_update_notifier: "false"}
      writable: [%q]
      startup: eager
      sampling: allow
`, cache, cache)
	if err := os.MkdirAll(filepath.Join(work, "config", "odin"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "config", "odin"), "odin.yaml", cfg)
	call := func(name string, args map[string]any) llmtest.Step {
		return llmtest.Step{ToolCalls: []llmtest.ToolCall{llmtest.Call(name, args)}}
	}
	form := call("mcp__everything__trigger-elicitation-request", map[string]any{})
	form.When = "fill the form"
	sample := call("mcp__everything__trigger-sampling-request", map[string]any{"prompt": "say hi"})
	sample.When = "sample something"
	research := call("mcp__everything__simulate-research-query", map[string]any{"topic": "python", "ambiguous": true})
	research.When = "research python"
	script := llmtest.NewScript().Add("orchestrator",
		form,
		llmtest.Step{When: "User provided the requested information", Text: "Thanks for the form."},
		sample,
		llmtest.Step{When: "LLM sampling result", Text: "Sampled."},
		research,
		llmtest.Step{When: "Research Report", Text: "Researched."},
	).Add("small", llmtest.Step{When: "say hi", Text: "hi from the small model"})
	srv, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=sk-test", "ODIN_MODELS_MAIN=scripted-model", "ODIN_MODELS_SMALL=scripted-model")
	_, c := startServe(t, env, root, "--allow", "mcp__everything__*")
	sess := c.do("POST", "/v1/sessions", map[string]string{"project": root}, http.StatusCreated)
	id := sess["id"].(string)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evs := c.stream(ctx, id, "")

	// The form.
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "fill the form"}, http.StatusAccepted)
	seen := until(t, evs, "elicitation_requested")
	req := seen[len(seen)-1].Data
	eid, _ := req["id"].(string)
	schema := fmt.Sprint(req["schema"])
	if req["server"] != "everything" || req["mode"] != "form" || !strings.Contains(schema, "firstLine") {
		t.Fatalf("elicitation_requested = %v", req)
	}
	path := "/v1/sessions/" + id + "/elicitations/" + eid
	c.do("POST", path, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "integer": 500}}, http.StatusBadRequest)
	c.do("POST", path, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada Lovelace", "check": true, "email": "ada@example.com"}}, http.StatusNoContent)
	seen = until(t, evs, "turn_finished")
	if !strings.Contains(strings.Join(types(seen), " "), "elicitation_resolved") {
		t.Errorf("no elicitation_resolved in %v", types(seen))
	}
	out := lastToolOutput(seen)
	for _, want := range []string{"Name: Ada Lovelace", "Email: ada@example.com", "Favorite Integer: 42", "Agreed to terms: true", `"firstLine": "It was a dark and stormy night."`} {
		if !strings.Contains(out, want) {
			t.Errorf("the server's result lacks %q:\n%s", want, out)
		}
	}

	// Sampling, answered by the small model.
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "sample something"}, http.StatusAccepted)
	seen = until(t, evs, "turn_finished")
	if out := lastToolOutput(seen); !strings.Contains(out, "hi from the small model") {
		t.Errorf("sampling result:\n%s", out)
	}
	if n := len(srv.RequestsFor("small")); n != 1 {
		t.Errorf("%d requests to the small model, want 1", n)
	}

	// The task, with its question on the way.
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "research python"}, http.StatusAccepted)
	seen = until(t, evs, "elicitation_requested")
	req = seen[len(seen)-1].Data
	c.do("POST", "/v1/sessions/"+id+"/elicitations/"+req["id"].(string), map[string]any{"action": "accept", "content": map[string]any{"interpretation": "snake"}}, http.StatusNoContent)
	seen = append(seen, until(t, evs, "turn_finished")...)
	if out := lastToolOutput(seen); !strings.Contains(out, "Research Report: python (snake)") {
		t.Errorf("research result:\n%s", out)
	}
	var status []string
	for _, ev := range seen {
		if ev.Type == "notice" && strings.Contains(fmt.Sprint(ev.Data["text"]), "simulate-research-query") {
			status = append(status, fmt.Sprint(ev.Data["text"]))
		}
	}
	joined := strings.Join(status, "\n")
	for _, want := range []string{"Gathering sources", "(input_required)", `Continuing with interpretation: "snake"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("the task's status notices lack %q:\n%s", want, joined)
		}
	}
}

// lastToolOutput is the output of the last tool_finished event in evs.
func lastToolOutput(evs []sseEvent) string {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == "tool_finished" {
			return fmt.Sprint(evs[i].Data["output"])
		}
	}
	return ""
}

// TestMCPEverythingTaskOverStreamableHTTP: server-everything started as
// its README says for Streamable HTTP (npx
// @modelcontextprotocol/server-everything streamableHttp, PORT set), its
// task-only research tool called through `odin tool`: the call runs as a
// task over Odin's own HTTP side channel, its status messages shown, the
// question it asks on the way declined with the reason (headless).
func TestMCPEverythingTaskOverStreamableHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node servers")
	}
	cache := npxCache(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command("npx", "-y", "@modelcontextprotocol/server-everything", "streamableHttp")
	srv.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port), "npm_config_cache="+cache, "npm_config_prefer_offline=true", "npm_config_update_notifier=false")
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs strings.Builder
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if i > 600 {
			t.Fatalf("server-everything did not listen on %d: %s", port, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	env, root := acpEnv(t)
	work := filepath.Dir(root)
	if err := os.MkdirAll(filepath.Join(work, "config", "odin"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "config", "odin"), "odin.yaml", fmt.Sprintf("mcp:\n  servers:\n    ev:\n      url: %s\n", url))
	cmd := exec.Command(filepath.Join(binDir, "odin"), "--allow", "mcp__ev__*", "tool", "mcp__ev__simulate-research-query", `{"topic":"python","ambiguous":true}`)
	cmd.Dir, cmd.Env = root, append(env, "OPENAI_API_KEY=sk-test")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("odin tool: %v\n%s", err, out)
	}
	for _, want := range []string{"Research Report: python (User declined - using default interpretation)",
		"mcp__ev__simulate-research-query: Gathering sources... (working)",
		`MCP server ev asked for input ("The research query \"python\" could have multiple interpretations`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

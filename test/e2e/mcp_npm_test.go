package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// npmPackages are the reference MCP servers, published on npm by the MCP
// project: nobody here wrote them.
var npmPackages = []string{"@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem"}

var npmOnce struct {
	sync.Once
	dir string
	err error
}

// npmServers installs the reference servers once per test run into a
// temporary directory and returns its node_modules/.bin; it skips the test
// when npm is missing or the install fails (no registry).
func npmServers(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: skipping the tests against the npm MCP reference servers")
	}
	npmOnce.Do(func() {
		// Under binDir, which TestMain removes after the run.
		dir, err := os.MkdirTemp(binDir, "npm")
		if err != nil {
			npmOnce.err = err
			return
		}
		cmd := exec.Command("npm", append([]string{"install", "--no-audit", "--no-fund", "--prefix", dir}, npmPackages...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			npmOnce.err = fmt.Errorf("%v\n%s", err, out)
			return
		}
		npmOnce.dir = filepath.Join(dir, "node_modules", ".bin")
	})
	if npmOnce.err != nil {
		t.Skipf("npm install of %v failed, skipping: %v", npmPackages, npmOnce.err)
	}
	return npmOnce.dir
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestMCPReferenceServers runs `odin run` against the npm reference
// servers: server-everything over stdio, Streamable HTTP and legacy SSE, and
// server-filesystem over stdio. The Orchestrator calls a tool of each and
// gets their results; the provider key never reaches a server's
// environment (get-env prints the server's whole environment).
func TestMCPReferenceServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node servers")
	}
	bin := npmServers(t)
	work := t.TempDir()
	proj := filepath.Join(work, "proj")
	if err := os.MkdirAll(filepath.Join(work, ".config", "odin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("the launch code is tulip\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	port := startEverything(t, bin, "streamableHttp")
	ssePort := startEverything(t, bin, "sse")

	cfg := fmt.Sprintf(`mcp:
  connect_timeout: 60s
  servers:
    everything:
      command: %s
    fs:
      command: %s
      args: [%q]
    web:
      url: http://127.0.0.1:%d/mcp
    legacy:
      type: sse
      url: http://127.0.0.1:%d/sse
`, filepath.Join(bin, "mcp-server-everything"), filepath.Join(bin, "mcp-server-filesystem"), proj, port, ssePort)
	if err := os.WriteFile(filepath.Join(work, ".config", "odin", "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	script, err := llmtest.ParseScript([]byte(fmt.Sprintf(`agents:
  orchestrator:
    - tool_calls:
        - {name: mcp__everything__get-env, arguments: {}}
        - {name: mcp__fs__read_text_file, arguments: {path: %q}}
        - {name: mcp__web__get-sum, arguments: {a: 2, b: 3}}
        - {name: mcp__legacy__echo, arguments: {message: "over sse"}}
        - {name: mcp__everything__get-tiny-image, arguments: {}}
    - when: "The sum of 2 and 3 is 5"
      text: "All three answered."
`, filepath.Join(proj, "notes.txt"))))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t, script)
	const secret = "sk-canary-4f1d9a"
	cmd := exec.Command(filepath.Join(binDir, "odin"), "run", "-q", "--allow", "mcp__*", "use the servers")
	cmd.Dir = proj
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY="+secret,
		"HOME="+filepath.Join(work, ".home"), "XDG_STATE_HOME="+filepath.Join(work, ".state"),
		"XDG_CONFIG_HOME="+filepath.Join(work, ".config"), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("odin run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "All three answered.") {
		t.Fatalf("odin run output:\n%s", out)
	}
	reqs := srv.RequestsFor("orchestrator")
	if len(reqs) != 2 {
		t.Fatalf("orchestrator sent %d requests, want 2", len(reqs))
	}
	var seen strings.Builder
	for _, m := range reqs[1].Body.LLMMessages() {
		seen.WriteString(m.Content + "\n")
	}
	got := seen.String()
	for _, want := range []string{"the launch code is tulip", "The sum of 2 and 3 is 5.", "Echo: over sse", "PATH"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model did not get %q from the servers; it saw:\n%s", want, got)
		}
	}
	// get-tiny-image's PNG follows the tool results as an image part (tool
	// messages carry text only), and the tool's text says so.
	var images []string
	for _, m := range reqs[1].Body.Messages {
		if m.Role == "user" {
			images = append(images, m.ImageURLs()...)
		}
	}
	if len(images) != 1 || !strings.HasPrefix(images[0], "data:image/png;base64,iVBORw0KGgo") {
		t.Errorf("the tiny image did not reach the model as a PNG data URL: %.80q", images)
	}
	if !strings.Contains(got, "[image: mcp__everything__get-tiny-image image 1 20x20]") {
		t.Errorf("the tool result does not announce its image; the model saw:\n%s", got)
	}
	if strings.Contains(got, secret) {
		t.Errorf("the provider key reached an MCP server's environment:\n%s", got)
	}
	for _, name := range []string{"mcp__everything__echo", "mcp__fs__read_text_file", "mcp__web__get-sum"} {
		if !strings.Contains(" "+strings.Join(reqs[0].Body.ToolNames(), " ")+" ", " "+name+" ") {
			t.Errorf("first request does not offer %s", name)
		}
	}
}

// startEverything runs server-everything in an HTTP mode on a free port
// until the test ends and returns the port.
func startEverything(t *testing.T, bin, mode string) int {
	t.Helper()
	port := freePort(t)
	srv := exec.Command(filepath.Join(bin, "mcp-server-everything"), mode)
	srv.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	for deadline := time.Now().Add(60 * time.Second); ; {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not listen on %d", mode, port)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMCPReferenceResourcesAndPrompts drives the REPL (line mode) against
// server-everything: @everything:URI attaches a static document resource,
// and /mcp__everything__args-prompt renders the server's prompt with its
// arguments as the user's input.
func TestMCPReferenceResourcesAndPrompts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node servers")
	}
	bin := npmServers(t)
	work := t.TempDir()
	proj := filepath.Join(work, "proj")
	for _, d := range []string{filepath.Join(work, ".config", "odin"), proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("mcp:\n  connect_timeout: 60s\n  servers:\n    everything:\n      command: %s\n", filepath.Join(bin, "mcp-server-everything"))
	if err := os.WriteFile(filepath.Join(work, ".config", "odin", "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := llmtest.ParseScript([]byte(`agents:
  orchestrator:
    - when: "Everything Server - Features"
      text: "Got the features document."
    - when: "What's weather in Paris, Texas?"
      text: "Sunny."
`))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t, script)
	cmd := exec.Command(filepath.Join(binDir, "odin"))
	cmd.Dir = proj
	cmd.Stdin = strings.NewReader("summarise @everything:demo://resource/static/document/features.md\n/mcp__everything__args-prompt Paris Texas\n")
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=sk-test",
		"HOME="+filepath.Join(work, ".home"), "XDG_STATE_HOME="+filepath.Join(work, ".state"),
		"XDG_CONFIG_HOME="+filepath.Join(work, ".config"), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("odin: %v\n%s", err, out)
	}
	for _, want := range []string{"attached @everything:demo://resource/static/document/features.md", "Got the features document.", "Sunny."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if reqs := srv.RequestsFor("orchestrator"); len(reqs) != 2 {
		t.Errorf("orchestrator sent %d requests, want 2", len(reqs))
	}
}

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// relaySetup skips where the test cannot run and returns a project with a
// site/ directory holding notes.txt, odin's environment (configured with
// agents from cfg), and two loopback ports free on the host: allowed,
// which web.browser.loopback_ports names, and denied, which it does not.
func relaySetup(t *testing.T, agents string) (project string, env []string, allowed, denied int) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: ShellSession and WebBrowser run in the sandbox")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the test's server is python3 -m http.server")
	}
	found := false
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if _, err := exec.LookPath(name); err == nil {
			found = true
		}
	}
	if !found {
		t.Skip("no chromium on PATH: install Debian's chromium (apt-get install chromium) to run the browser tests")
	}
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project = filepath.Join(work, "project")
	cfgDir := filepath.Join(work, ".config", "odin")
	for _, d := range []string{filepath.Join(project, "site"), cfgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(project, "site", "notes.txt"), []byte("relay-canary-8e2b: served from the shell's sandbox\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	allowed, denied = hostFreePort(t), hostFreePort(t)
	for allowed == denied {
		denied = hostFreePort(t)
	}
	cfg := fmt.Sprintf("web:\n  browser:\n    loopback_ports: [%d]\nagents:\n%s", allowed, agents)
	if err := os.WriteFile(filepath.Join(cfgDir, "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "OPENAI_API_KEY="+browserSecret, "NO_COLOR=1",
		"HOME="+filepath.Join(work, ".home"), "XDG_STATE_HOME="+filepath.Join(work, ".state"),
		"XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	return project, env, allowed, denied
}

func hostFreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// serveInShell is the ShellSession command that starts python3 -m
// http.server on port in the background, serving site/ and logging every
// request to log in the project, and waits until it accepts.
func serveInShell(port int, log string) string {
	return fmt.Sprintf("python3 -u -m http.server %d --bind 127.0.0.1 --directory site > %s 2>&1 &\n"+
		"for i in $(seq 100); do python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", %d))' 2>/dev/null && break; sleep 0.1; done; echo serving %d",
		port, log, port, port)
}

// getLines are the requests an http.server log records.
var getLines = regexp.MustCompile(`"GET [^"]*"`)

// TestBrowserOpensShellSessionServer (issue 36): a background
// `python3 -m http.server PORT &` started by ShellSession in one call is
// fetched by WebBrowser in the next, in the same agent run, and the agent
// reads a file listed there. The server runs in the shell's sandbox, with
// a loopback of its own: the browser's requests reach it through Odin's
// loopback relay. A second server of the same shell on a port that
// web.browser does not allow is never reached: its request log, written
// to the project, records the server starting and no request.
func TestBrowserOpensShellSessionServer(t *testing.T) {
	project, env, allowed, denied := relaySetup(t,
		"  web:\n    description: Serves and browses.\n    prompt: You start servers and check them in the browser.\n    tools: [ShellSession, WebBrowser]\n")
	start := serveInShell(allowed, "allowed.log") + "\n" + serveInShell(denied, "denied.log")
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("agent", map[string]any{"agent": "web", "description": "w", "prompt": "Serve the site and read the notes in the browser."})),
		llmtest.Step{When: "relay-checked", Text: "The notes say relay-canary-8e2b."},
	).Add("web",
		llmtest.Calls(llmtest.Call("ShellSession", map[string]any{"command": start})),
		llmtest.Step{When: fmt.Sprintf("serving %d", denied), ToolCalls: []llmtest.ToolCall{browse(map[string]any{"action": "navigate", "url": fmt.Sprintf("http://127.0.0.1:%d/", allowed)})}},
		llmtest.Step{When: "notes.txt", ToolCalls: []llmtest.ToolCall{browse(map[string]any{"action": "click", "selector": `a[href="notes.txt"]`})}},
		llmtest.Step{When: "relay-canary-8e2b", ToolCalls: []llmtest.ToolCall{browse(map[string]any{"action": "navigate", "url": fmt.Sprintf("http://127.0.0.1:%d/", denied)})}},
		llmtest.Step{When: "failed", ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{"summary": "relay-checked"})}},
	).Add("review", // the servers' two logs in the project are a multi-file change
		llmtest.Calls(llmtest.Call("Report", map[string]any{"files_reviewed": []string{"allowed.log"}, "issues": []any{}, "overall_score": 8, "summary": "Fine.", "approved": true})),
	).Add("synthesis", llmtest.Step{Text: "The notes say relay-canary-8e2b."})
	srv, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "odin"), "--yolo", "run", "serve and browse")
	var buf bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = project, append(env, "OPENAI_BASE_URL="+srv.URL()), &buf, &buf
	err = cmd.Run()
	out := buf.String()
	if err != nil {
		t.Fatalf("odin run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "The notes say relay-canary-8e2b.") {
		t.Fatalf("odin run did not finish the script:\n%s", out)
	}
	reqs := srv.RequestsFor("web")
	if len(reqs) != 5 {
		t.Fatalf("the web agent made %d requests, want 5:\n%s", len(reqs), out)
	}
	toolText := func(r llmtest.Request) string {
		var b strings.Builder
		for _, m := range r.Body.Messages {
			if m.Role == "tool" {
				b.WriteString(m.Text() + "\n")
			}
		}
		return b.String()
	}
	if listing := toolText(reqs[2]); !strings.Contains(listing, "Directory listing") {
		t.Errorf("the browser did not show the shell's server's listing:\n%s", listing)
	}
	if file := toolText(reqs[3]); !strings.Contains(file, "relay-canary-8e2b: served from the shell's sandbox") {
		t.Errorf("the click on notes.txt did not show the file:\n%s", file)
	}
	if refused := toolText(reqs[4]); !strings.Contains(refused, "failed") {
		t.Errorf("navigating to the port not allowed was not refused:\n%s", refused)
	}
	logOf := func(name string) string {
		b, err := os.ReadFile(filepath.Join(project, name))
		if err != nil {
			t.Fatalf("the server's log: %v", err)
		}
		return string(b)
	}
	got := getLines.FindAllString(logOf("allowed.log"), -1)
	if want := []string{`"GET / HTTP/1.1"`, `"GET /notes.txt HTTP/1.1"`}; !containsAll(got, want) {
		t.Errorf("the allowed server's log has requests %q, want %q among them", got, want)
	}
	deniedLog := logOf("denied.log")
	if !strings.Contains(deniedLog, fmt.Sprintf("port %d", denied)) {
		t.Errorf("the server on the port not allowed never ran (log %q): the attack proves nothing", deniedLog)
	}
	if reqs := getLines.FindAllString(deniedLog, -1); len(reqs) != 0 {
		t.Errorf("the server on a port not allowed was reached: %q", reqs)
	}
	if strings.Contains(out, browserSecret) {
		t.Errorf("the API key is in odin's output")
	}
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

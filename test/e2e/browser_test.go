package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// browserTestSetup skips where the browser cannot run and serves
// testdata/browser on two loopback servers: the allowed one, whose port
// web.browser.loopback_ports names, and one that is not allowed; each
// counts its requests.
func browserTestSetup(t *testing.T) (allowed, other *httptest.Server, otherHits *atomic.Int64, env []string, project string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: WebBrowser runs in the sandbox")
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
	allowed = httptest.NewServer(http.FileServer(http.Dir("testdata/browser")))
	t.Cleanup(allowed.Close)
	otherHits = new(atomic.Int64)
	other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		http.FileServer(http.Dir("testdata/browser")).ServeHTTP(w, r)
	}))
	t.Cleanup(other.Close)
	_, port, _ := net.SplitHostPort(allowed.Listener.Addr().String())

	work := t.TempDir()
	project = filepath.Join(work, "project")
	cfgDir := filepath.Join(work, ".config", "odin")
	for _, d := range []string{project, cfgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`web:
  browser:
    loopback_ports: [%s]
agents:
  browse:
    description: Drives the web browser.
    prompt: You check web pages with the browser.
    tools: [WebBrowser]
`, port)
	if err := os.WriteFile(filepath.Join(cfgDir, "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "OPENAI_API_KEY="+browserSecret, "NO_COLOR=1",
		"HOME="+filepath.Join(work, ".home"), "XDG_STATE_HOME="+filepath.Join(work, ".state"),
		"XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	return allowed, other, otherHits, env, project
}

// browserSecret is odin's API key in these tests: no process of the
// browser may see it.
const browserSecret = "sk-browser-canary-5d1e"

func browse(args map[string]any) llmtest.ToolCall { return llmtest.Call("WebBrowser", args) }

// TestBrowserAgentClicksAndSees: an agent whose tools name WebBrowser
// opens a page served from testdata on an allowed loopback port, clicks
// its button and reads the changed text; its screenshot reaches the
// (image-capable) scripted model as an image part; a page on another
// loopback port is refused by odin and that server sees no request; and
// no process of the browser is left when the run is over.
func TestBrowserAgentClicksAndSees(t *testing.T) {
	allowed, other, otherHits, env, project := browserTestSetup(t)
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("agent", map[string]any{"agent": "browse", "description": "b", "prompt": "Press the button and tell me the status."})),
		llmtest.Step{When: "browse", Text: "The status changed."},
	).Add("browse",
		llmtest.Calls(browse(map[string]any{"action": "navigate", "url": allowed.URL + "/page.html"})),
		llmtest.Step{When: "Status: waiting", ToolCalls: []llmtest.ToolCall{browse(map[string]any{"action": "click", "ref": 1})}},
		llmtest.Step{When: "Status: clicked", ToolCalls: []llmtest.ToolCall{browse(map[string]any{"action": "screenshot"})}},
		llmtest.Step{When: "[image: screenshot", Hold: "shot", ToolCalls: []llmtest.ToolCall{browse(map[string]any{"action": "navigate", "url": other.URL + "/page.html"})}},
		llmtest.Step{When: "failed", ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{"summary": "clicked"})}},
	)
	srv, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cmd := exec.Command(filepath.Join(binDir, "odin"), "run", "press the button")
	var buf bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = project, append(env, "OPENAI_BASE_URL="+srv.URL()), &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := srv.WaitHeld(ctx, "shot"); err != nil {
		t.Fatalf("the agent never took its screenshot: %v\n%s", err, buf.String())
	}
	procs := browserProcesses(cmd.Process.Pid)
	if len(procs) == 0 {
		t.Fatalf("no Chromium of odin's found while the page is open")
	}
	srv.Release("shot")
	err = cmd.Wait()
	out := buf.Bytes()
	if err != nil {
		t.Fatalf("odin run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "The status changed.") {
		t.Fatalf("odin run did not finish the script:\n%s", out)
	}
	if bytes.Contains(out, []byte(browserSecret)) {
		t.Errorf("the API key is in odin's output")
	}
	reqs := srv.RequestsFor("browse")
	if len(reqs) != 5 {
		t.Fatalf("the browse agent made %d requests, want 5:\n%s", len(reqs), out)
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
	// After the click: the changed text, fenced as untrusted.
	clicked := toolText(reqs[2])
	if !strings.Contains(clicked, "Status: clicked") || !strings.Contains(clicked, "[button \"Press me\" ref=1]") {
		t.Errorf("the click's result lacks the changed page:\n%s", clicked)
	}
	if !strings.Contains(clicked, "untrusted") && !strings.Contains(strings.ToLower(clicked), "fence") {
		t.Errorf("the page text is not fenced:\n%s", clicked)
	}
	// The screenshot: an image part of the next request.
	var images []string
	for _, m := range reqs[3].Body.Messages {
		images = append(images, m.ImageURLs()...)
	}
	if len(images) != 1 || !strings.HasPrefix(images[0], "data:image/png;base64,") {
		t.Errorf("the request after the screenshot carries images %.80q, want one PNG", images)
	}
	// The server not allowed: refused, never reached.
	if refused := toolText(reqs[4]); !strings.Contains(refused, "failed") {
		t.Errorf("navigating to a loopback port not allowed was not refused:\n%s", refused)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the loopback server not allowed saw %d requests from the browser", n)
	}
	// Nothing of the browser outlives the run.
	if left := waitGone(procs); len(left) > 0 {
		t.Errorf("browser processes left after the run: %v", left)
	}
}

// TestBrowserDiesWithOdin: odin killed with SIGKILL while its agent's
// browser is open leaves no browser process behind; while it ran, the
// browser's processes did not have odin's API key in their environment,
// and the page could not write outside its profile (the project holds no
// file from the download the page offered).
func TestBrowserDiesWithOdin(t *testing.T) {
	allowed, _, _, env, project := browserTestSetup(t)
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("agent", map[string]any{"agent": "browse", "description": "b", "prompt": "Open the page."})),
		llmtest.Reply("unreachable"),
	).Add("browse",
		llmtest.Calls(browse(map[string]any{"action": "navigate", "url": allowed.URL + "/page.html"})),
		llmtest.Step{When: "Status: waiting", ToolCalls: []llmtest.ToolCall{browse(map[string]any{"action": "click", "selector": "#download"})}},
		llmtest.Step{Hold: "open", Text: "never"},
	)
	srv, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cmd := exec.Command(filepath.Join(binDir, "odin"), "run", "open the page")
	var out bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = project, append(env, "OPENAI_BASE_URL="+srv.URL()), &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := srv.WaitHeld(ctx, "open"); err != nil {
		t.Fatalf("the agent never got the page: %v\n%s", err, out.String())
	}
	procs := browserProcesses(cmd.Process.Pid)
	if len(procs) == 0 {
		t.Fatalf("no Chromium of odin's found while the page is open")
	}
	// Chromium writes its process title over its environment: odin-browser
	// (which started it with its own environment) is the one to read.
	helpers := descendants(cmd.Process.Pid, func(cmdline []byte) bool {
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		return filepath.Base(string(argv0)) == "odin-browser"
	})
	read := 0
	for _, pid := range helpers {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		switch {
		case err != nil:
			t.Logf("environment of odin-browser (%d): %v", pid, err)
		case bytes.Contains(environ, []byte(browserSecret)):
			t.Errorf("odin-browser (%d) has odin's API key in its environment", pid)
		case !bytes.Contains(environ, []byte("PATH=")):
			t.Errorf("odin-browser (%d): an environment without PATH was read: %.200q", pid, environ)
		default:
			read++
		}
	}
	if read == 0 {
		t.Errorf("odin-browser's environment could not be read to check it (processes %v)", helpers)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if left := waitGone(procs); len(left) > 0 {
		t.Errorf("browser processes outlived odin's kill -9: %v", left)
	}
	entries, _ := os.ReadDir(project)
	for _, e := range entries {
		t.Errorf("the page's download landed in the project: %s", e.Name())
	}
	home, _ := os.ReadDir(filepath.Join(filepath.Dir(project), ".home"))
	for _, e := range home {
		if e.Name() == "Downloads" || strings.Contains(e.Name(), "canary") {
			t.Errorf("the page's download landed in HOME: %s", e.Name())
		}
	}
}

// browserProcesses are the running processes descending from odin (pid
// root) whose command line names an odin-browser profile: the Chromium
// processes of its browsers.
func browserProcesses(root int) []int {
	return descendants(root, func(cmdline []byte) bool { return bytes.Contains(cmdline, []byte("odin-browser-profile-")) })
}

// descendants are the running processes descending from root whose
// command line match accepts.
func descendants(root int, match func(cmdline []byte) bool) []int {
	parent := map[int]int{}
	var marked []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && match(cmdline) {
			marked = append(marked, pid)
		}
	}
	var pids []int
	for _, pid := range marked {
		for p, n := pid, 0; p > 1 && n < 64; p, n = parent[p], n+1 {
			if p == root {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// waitGone returns the pids of procs still running after a grace period:
// the sandbox's processes are SIGKILLed when its first process ends, and
// a many-threaded Chromium takes the kernel a moment to tear down.
func waitGone(procs []int) []int {
	deadline := time.Now().Add(15 * time.Second)
	for len(alive(procs)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	return alive(procs)
}

// alive are the pids of procs still running (zombies count as gone).
func alive(procs []int) []int {
	var out []int
	for _, pid := range procs {
		if pidRunning(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestBrowserProcessIsConfined: a probe in odin-browser's place tries
// what a compromised browser would — write into the project and HOME,
// connect to a loopback server itself, read odin's environment — through
// `odin tool WebBrowser`, the CLI's real wiring.
func TestBrowserProcessIsConfined(t *testing.T) {
	_, other, otherHits, env, project := browserTestSetup(t)
	host, port, _ := net.SplitHostPort(other.Listener.Addr().String())
	work := filepath.Dir(project)
	home := filepath.Join(work, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	canaries := []string{filepath.Join(project, "written-by-odin-browser"), filepath.Join(home, "written-by-odin-browser")}
	probe := filepath.Join(work, "probe")
	script := fmt.Sprintf(`#!/bin/bash
echo pwned > %q 2>/dev/null
echo pwned > %q 2>/dev/null
{ exec 3<>/dev/tcp/%s/%s; } 2>/dev/null && printf 'GET /direct HTTP/1.0\r\n\r\n' >&3
echo "PROBE-RAN env: $(env | tr '\n' ' ')" >&2
exit 3
`, canaries[0], canaries[1], host, port)
	if err := os.WriteFile(probe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(binDir, "odin"), "tool", "WebBrowser", `{"action":"read"}`)
	cmd.Dir, cmd.Env = project, append(env, "ODIN_BROWSER="+probe, "OPENAI_BASE_URL=http://127.0.0.1:1/v1")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "PROBE-RAN") {
		t.Fatalf("the probe did not run in odin-browser's place (its stderr line is not reported):\n%s", out)
	}
	for _, c := range canaries {
		if _, err := os.Stat(c); !os.IsNotExist(err) {
			t.Errorf("odin-browser wrote %s (%v)", c, err)
		}
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("odin-browser reached a loopback server itself: %d requests", n)
	}
	if strings.Contains(string(out), browserSecret) {
		t.Errorf("odin's API key reached odin-browser's environment:\n%s", out)
	}
}

// odin's own binary links neither chromedp nor the DevTools protocol: they
// live in odin-browser, which costs odin nothing at start-up.
func TestOdinLinksNoBrowserDriver(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/odin-code/odin/cmd/odin").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/chromedp/", "github.com/odin-code/odin/internal/browser/driver"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("odin links %s; it belongs in odin-browser", dep)
			}
		}
	}
	out, err = exec.Command("go", "version", "-m", filepath.Join(binDir, "odin")).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "chromedp") {
		t.Errorf("odin's build info lists chromedp:\n%s", out)
	}
}

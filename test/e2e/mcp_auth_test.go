package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/mcp/oauthtest"
)

func init() {
	helperCommands["odin-test-browser"] = testBrowser
}

// testBrowser is $BROWSER in these tests: it opens the URL it is given as
// a browser would, following the authorization server's redirect to
// Odin's loopback listener, and exits.
func testBrowser() int {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: odin-test-browser URL")
		return 2
	}
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "browser:", resp.Status)
		return 1
	}
	return 0
}

// authHome is a user with an http MCP server "prot" in their config, under
// /var/tmp: bubblewrap replaces /tmp with a private one, so a state dir
// there would be out of a sandboxed command's sight whatever Odin hides.
type authHome struct {
	t            *testing.T
	dir, proj    string
	state        string
	env          []string
	stdout, errs string
}

func newAuthHome(t *testing.T, serverURL string) *authHome {
	dir, err := os.MkdirTemp("/var/tmp", "odin-mcpauth-")
	if err != nil {
		dir = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	h := &authHome{t: t, dir: dir, proj: filepath.Join(dir, "proj"), state: filepath.Join(dir, "state")}
	for _, d := range []string{h.proj, filepath.Join(dir, "config", "odin"), filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(h.proj, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("mcp:\n  servers:\n    prot:\n      url: %s\n", serverURL)
	if err := os.WriteFile(filepath.Join(dir, "config", "odin", "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "BROWSER", "DISPLAY", "WAYLAND_DISPLAY", "OPENAI_BASE_URL":
			continue
		}
		h.env = append(h.env, kv)
	}
	h.env = append(h.env, "HOME="+filepath.Join(dir, "home"), "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"NO_COLOR=1", "BROWSER=odin-test-browser")
	h.state = filepath.Join(dir, "odin")
	return h
}

// odin runs the built binary in the project; it reports whether it exited
// 0 and keeps its output in h.stdout and h.errs.
func (h *authHome) odin(extraEnv []string, args ...string) bool {
	h.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "odin"), args...)
	cmd.Dir, cmd.Env = h.proj, append(append([]string(nil), h.env...), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	h.stdout, h.errs = out.String(), errb.String()
	h.t.Logf("odin %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), h.stdout, h.errs)
	return err == nil
}

// secrets are the stored tokens (access and refresh).
func (h *authHome) secrets() []string {
	h.t.Helper()
	files, _ := filepath.Glob(filepath.Join(h.state, "mcp-auth", "*.json"))
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			h.t.Fatal(err)
		}
		var c struct {
			Token struct {
				Access  string `json:"access_token"`
				Refresh string `json:"refresh_token"`
			} `json:"token"`
		}
		if err := json.Unmarshal(data, &c); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, c.Token.Access, c.Token.Refresh)
	}
	return out
}

func TestMCPOAuthLoginThroughTheCLI(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{Scopes: []string{"read"}})
	h := newAuthHome(t, as.MCPURL())

	// Before a login the server is listed as needing one.
	if !h.odin(nil, "mcp", "list") {
		t.Fatal("odin mcp list failed")
	}
	if !strings.Contains(h.stdout, "prot") || !strings.Contains(h.stdout, "needs login: run `odin mcp login prot`") {
		t.Fatalf("mcp list before login:\n%s", h.stdout)
	}

	// A headless run says so in one line and goes on without its tools.
	model := llmtest.NewServer(t, authScript(t, "agents:\n  orchestrator:\n    - when: \"say hi\"\n      text: \"Hi there.\"\n"))
	modelEnv := []string{"OPENAI_BASE_URL=" + model.URL()}
	if !h.odin(modelEnv, "run", "say hi") {
		t.Fatal("odin run with a server needing login failed")
	}
	if !strings.Contains(h.stdout, "Hi there.") {
		t.Errorf("the session did not go on: %q", h.stdout)
	}
	if n := strings.Count(h.errs, "MCP server prot needs login: run `odin mcp login prot`; its tools are left out"); n != 1 {
		t.Errorf("the needs-login line appears %d times in stderr, want once:\n%s", n, h.errs)
	}
	for _, r := range model.Requests() {
		if bytes.Contains(r.Raw, []byte("mcp__prot__")) {
			t.Errorf("a model request offers the tools of a server needing login")
		}
	}

	// The login: the browser follows the redirect to Odin's listener.
	if !h.odin(nil, "--log-level", "debug", "mcp", "login", "prot") {
		t.Fatal("odin mcp login failed")
	}
	if !strings.Contains(h.stdout, "logged in to MCP server prot (2 tools)") || !strings.Contains(h.stdout, as.URL+"/as/authorize?") {
		t.Errorf("login output:\n%s", h.stdout)
	}
	files, _ := filepath.Glob(filepath.Join(h.state, "mcp-auth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode: %v, %v", fi.Mode(), err)
	}
	loginOut := h.stdout + h.errs

	if !h.odin(nil, "mcp", "list") {
		t.Fatal("odin mcp list failed")
	}
	if !authMatch(`(?m)^prot\s+http\s+ready\s+2\s`, h.stdout) {
		t.Errorf("mcp list after login:\n%s", h.stdout)
	}
	listOut := h.stdout + h.errs

	// The tool works from a session's wiring.
	if !h.odin(nil, "--allow", "mcp__*", "tool", "mcp__prot__whoami", "{}") || !strings.Contains(h.stdout, "an authorized client") {
		t.Errorf("whoami after login: %q %q", h.stdout, h.errs)
	}

	// A sandboxed command sees neither the token in its environment nor
	// the credentials file. The marker proves the command ran.
	if _, err := exec.LookPath("bwrap"); err == nil {
		probe := `{"command":"echo MARK; env; cat ` + h.state + `/mcp-auth/*.json; ls ` + h.state + `"}`
		h.odin(nil, "--yolo", "tool", "ExecuteCommand", probe)
		if !strings.Contains(h.stdout, "MARK") {
			t.Fatalf("the probe did not run: %q %q", h.stdout, h.errs)
		}
		for _, s := range h.secrets() {
			if strings.Contains(h.stdout+h.errs, s) {
				t.Errorf("a sandboxed command read the token %q", s)
			}
		}
	} else {
		t.Log("bubblewrap is not installed: the sandboxed-child check is skipped")
	}

	// Refresh after expiry: the stored token is made stale; the next run
	// refreshes it once and saves the new one.
	raw, _ := os.ReadFile(files[0])
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	c["token"].(map[string]any)["expiry"] = time.Now().Add(-time.Hour).Format(time.RFC3339)
	raw, _ = json.Marshal(c)
	if err := os.WriteFile(files[0], raw, 0o600); err != nil {
		t.Fatal(err)
	}
	before := h.secrets()
	if !h.odin(nil, "--log-level", "debug", "mcp", "list") || !authMatch(`(?m)^prot\s+http\s+ready`, h.stdout) {
		t.Fatalf("mcp list with an expired token:\n%s", h.stdout)
	}
	if as.Refreshes() != 1 {
		t.Errorf("refreshes = %d, want 1", as.Refreshes())
	}
	if after := h.secrets(); after[0] == before[0] {
		t.Errorf("the refreshed token was not saved")
	}
	refreshOut := h.stdout + h.errs

	// No token in anything Odin printed or logged.
	logs, _ := os.ReadFile(filepath.Join(h.state, "odin.log"))
	for _, s := range append(before, h.secrets()...) {
		for what, text := range map[string]string{"login output": loginOut, "list output": listOut, "refresh output": refreshOut, "odin.log": string(logs)} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds a token", what)
			}
		}
	}

	// Logout forgets it; the server needs a login again.
	if !h.odin(nil, "mcp", "logout", "prot") || !strings.Contains(h.stdout, "logged out of MCP server prot") {
		t.Fatalf("logout: %q", h.stdout)
	}
	if files, _ := filepath.Glob(filepath.Join(h.state, "mcp-auth", "*.json")); len(files) != 0 {
		t.Errorf("token files after logout: %v", files)
	}
	h.odin(nil, "mcp", "list")
	if !strings.Contains(h.stdout, "needs login") {
		t.Errorf("mcp list after logout:\n%s", h.stdout)
	}
}

func TestMCPOAuthBadMetadataNamesTheServer(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{BadServerMetadata: true})
	h := newAuthHome(t, as.MCPURL())
	if h.odin(nil, "mcp", "login", "prot") {
		t.Fatal("login against bad metadata succeeded")
	}
	if !strings.Contains(h.errs, "MCP server prot: login failed") || !strings.Contains(h.errs, "authorization server metadata") {
		t.Errorf("error:\n%s", h.errs)
	}
	if files, _ := filepath.Glob(filepath.Join(h.state, "mcp-auth", "*.json")); len(files) != 0 {
		t.Errorf("token files after a failed login: %v", files)
	}
}

func authScript(t *testing.T, yaml string) *llmtest.Script {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := llmtest.LoadScript(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func authMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

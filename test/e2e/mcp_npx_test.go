package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// npxPackages are the reference servers started with npx exactly as their
// READMEs say; .ci/run seeds npxCache with them and their dependencies.
var npxPackages = []string{"@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem",
	"@modelcontextprotocol/server-memory"}

// npxCache is the npm cache the .ci/run block seeds (ODIN_NPM_CACHE, else
// ~/.cache/odin-npm); the test skips when it is missing or incomplete, so
// it never downloads anything itself.
func npxCache(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed: skipping the tests against the npm MCP reference servers")
	}
	dir := os.Getenv("ODIN_NPM_CACHE")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "odin-npm")
	}
	for _, p := range npxPackages {
		// Offline: only what the cache holds.
		out, err := exec.Command("npm", "view", "--offline", "--cache", dir, p, "name").CombinedOutput()
		if err != nil {
			t.Skipf("the npm cache %s lacks %s (seed it with the npm block of .ci/run): %v %s", dir, p, err, strings.TrimSpace(string(out)))
		}
	}
	return dir
}

// TestMCPNpxReferenceServers starts the npm reference servers as their
// READMEs say (npx -y PACKAGE [DIR]) under Odin's sandbox, through the
// built binary's `odin tool`: server-filesystem writes a file in the
// directory the user granted it, and the write lands on the host, while a
// write to the project it was not granted fails; server-memory keeps its
// knowledge graph in its data directory under Odin's state directory, so
// a second process reads what the first wrote; server-everything lists
// the project and the --add-dir as roots, and its long operation's
// progress is shown as it runs.
func TestMCPNpxReferenceServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node servers")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: the sandbox these servers run in is tested in internal/sandbox")
	}
	cache := npxCache(t)
	work := t.TempDir()
	proj := filepath.Join(work, "proj")
	notes := filepath.Join(work, "notes")
	shared := filepath.Join(work, "shared")
	for _, d := range []string{filepath.Join(work, ".config", "odin"), proj, notes, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// npx resolves from the seeded cache (prefer-offline) and installs the
	// package into it (_npx), so the cache is granted too.
	npx := func(name string, args ...string) string {
		q := []string{`"-y"`}
		for _, a := range args {
			q = append(q, fmt.Sprintf("%q", a))
		}
		return fmt.Sprintf("    %s:\n      command: npx\n      args: [%s]\n      env: {npm_config_cache: %q, npm_config_prefer_offline: \"true\", npm_config_update_notifier: \"false\"}\n      writable: [%q%s]\n",
			name, strings.Join(q, ", "), cache, cache, map[bool]string{true: fmt.Sprintf(", %q", notes)}[name == "fs"])
	}
	cfg := "mcp:\n  connect_timeout: 120s\n  servers:\n" +
		npx("everything", "@modelcontextprotocol/server-everything") +
		npx("fs", "@modelcontextprotocol/server-filesystem", notes) +
		npx("memory", "@modelcontextprotocol/server-memory")
	if err := os.WriteFile(filepath.Join(work, ".config", "odin", "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(work, ".state")
	tool := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "odin"), append([]string{"--allow", "mcp__*", "tool"}, args...)...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-test", "HOME="+filepath.Join(work, ".home"),
			"XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+filepath.Join(work, ".config"), "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// server-filesystem takes the client's roots in place of its
	// command-line directory (its README's "MCP Roots"): notes is added
	// to the session (--add-dir) as well as granted. The write lands where
	// the user allowed it; one into the project, a root the sandbox keeps
	// read-only for servers, lands nowhere.
	target := filepath.Join(notes, "hello.txt")
	if out, err := tool("--add-dir", notes, "mcp__fs__write_file", fmt.Sprintf(`{"path":%q,"content":"written through odin"}`, target)); err != nil {
		t.Fatalf("write_file: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "written through odin" {
		t.Errorf("%s holds %q (%v), want the server's write", target, b, err)
	}
	if out, err := tool("--add-dir", notes, "mcp__fs__read_text_file", fmt.Sprintf(`{"path":%q}`, target)); err != nil || !strings.Contains(out, "written through odin") {
		t.Errorf("read_text_file: %v\n%s", err, out)
	}
	canary := filepath.Join(proj, "canary.txt")
	out, err := tool("--add-dir", notes, "mcp__fs__write_file", fmt.Sprintf(`{"path":%q,"content":"must not land"}`, canary))
	if err == nil {
		t.Errorf("a write into the read-only project succeeded:\n%s", out)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Errorf("%s was written", canary)
	}
	t.Logf("write into the project: %s", out)

	// server-memory: what one process stores, the next one reads.
	if out, err := tool("mcp__memory__create_entities", `{"entities":[{"name":"odin","entityType":"agent","observations":["writes Go in a sandbox"]}]}`); err != nil {
		t.Fatalf("create_entities: %v\n%s", err, out)
	}
	out, err = tool("mcp__memory__read_graph", `{}`)
	if err != nil || !strings.Contains(out, "writes Go in a sandbox") {
		t.Errorf("read_graph in a new process: %v\n%s", err, out)
	}
	memFile := filepath.Join(state, "odin", "mcp-data", "user", "memory", "memory.jsonl")
	if b, err := os.ReadFile(memFile); err != nil || !strings.Contains(string(b), "writes Go in a sandbox") {
		t.Errorf("the graph is not in the data directory %s: %v %q", memFile, err, b)
	}

	// server-everything: the roots are the project and the added directory.
	out, err = tool("--add-dir", shared, "mcp__everything__get-roots-list", `{}`)
	if err != nil {
		t.Fatalf("get-roots-list: %v\n%s", err, out)
	}
	for _, want := range []string{"file://" + proj, "file://" + shared} {
		if !strings.Contains(out, want) {
			t.Errorf("get-roots-list lacks %s:\n%s", want, out)
		}
	}

	// server-everything's long operation reports progress for the token
	// Odin's call carries; each step is shown while the call runs (the
	// last may race the result, so two of three are required).
	out, err = tool("mcp__everything__trigger-long-running-operation", `{"duration":1.5,"steps":3}`)
	if err != nil || !strings.Contains(out, "Long running operation completed") {
		t.Fatalf("trigger-long-running-operation: %v\n%s", err, out)
	}
	for _, want := range []string{"trigger-long-running-operation: 1/3", "trigger-long-running-operation: 2/3"} {
		if !strings.Contains(out, want) {
			t.Errorf("no progress %q shown:\n%s", want, out)
		}
	}
}

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// acpTSVersion is the npm package of the ACP TypeScript SDK the tests use.
const acpTSVersion = "@agentclientprotocol/sdk@2.4.0"

// acpTSDriver prepares the node script name of testdata/acpts to run with
// the ACP TypeScript SDK: the SDK installed by .ci/run in $ODIN_ACP_TS_SDK
// when that holds it, else installed now into a temporary directory. It
// returns node and the script's path, or skips, saying why, where node or
// npm is missing or the install fails (no registry).
func acpTSDriver(t *testing.T, name string) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: skipping the TypeScript ACP client test")
	}
	dir := t.TempDir()
	modules := filepath.Join(os.Getenv("ODIN_ACP_TS_SDK"), "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@agentclientprotocol", "sdk", "package.json")); os.Getenv("ODIN_ACP_TS_SDK") != "" && err == nil {
		if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
	} else {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("npm is not installed and ODIN_ACP_TS_SDK holds no SDK: skipping the TypeScript ACP client test")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", dir, acpTSVersion)
		if out, err := install.CombinedOutput(); err != nil {
			t.Skipf("npm install %s failed (no registry?): skipping: %v\n%s", acpTSVersion, err, out)
		}
	}
	src, err := os.ReadFile(filepath.Join("testdata", "acpts", name))
	if err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, name) // beside node_modules, so the import resolves
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return node, script
}

// TestACPTypeScriptClient drives `odin acp` with a client nobody here wrote:
// the protocol's TypeScript SDK from npm.
func TestACPTypeScriptClient(t *testing.T) {
	node, driver := acpTSDriver(t, "drive.mjs")
	env, root := acpEnv(t)
	srv, err := llmtest.Serve("127.0.0.1:0", acpScript(root))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	writeFile(t, root, "main.go", "package main\n\nfunc main() {}\n")
	writeFile(t, root, "keep.txt", "keep\n")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, driver, filepath.Join(binDir, "odin"), root)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("the TypeScript client failed: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "keep.txt")); !os.IsNotExist(err) {
		t.Errorf("keep.txt still there after the client allowed its deletion: %v", err)
	}
	if n := len(srv.RequestsFor("orchestrator")); n != 7 {
		t.Errorf("the model got %d requests, want 7", n)
	}
}

// TestACPTypeScriptConformance runs testdata/acpts/conformance.mjs with the
// TypeScript SDK's client: queued prompts answered in order, one id per
// tool call, fs requests and every update of a turn before its response
// (20 rounds with a cancel each), the mode after load, the commands list.
func TestACPTypeScriptConformance(t *testing.T) {
	const rounds = 20 // as in conformance.mjs
	node, driver := acpTSDriver(t, "conformance.mjs")
	env, root := acpEnv(t)
	writeFile(t, root, "main.go", "package main\n\nfunc main() {}\n")
	writeFile(t, root, "keep.txt", "keep\n")
	if err := os.MkdirAll(filepath.Join(root, ".odin", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ".odin", "commands"), "review.md", "---\ndescription: review a file\n---\nReview $ARGUMENTS.\n")
	steps := []llmtest.Step{
		// Slow enough for the second prompt to arrive while it runs.
		{When: "first question", Latency: llmtest.Duration(2 * time.Second), Text: "first answer"},
		{When: "second question", Text: "second answer"},
		{When: "delete keep.txt", ToolCalls: []llmtest.ToolCall{{ID: "call_rm_ts", Name: "ExecuteCommand", Arguments: llmtest.Args(map[string]any{"command": "rm keep.txt"})}}},
		{When: "Exit code", Text: "Deleted keep.txt."},
	}
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
	cmd := exec.CommandContext(ctx, node, driver, filepath.Join(binDir, "odin"), root)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("the TypeScript client's checks failed: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "keep.txt")); !os.IsNotExist(err) {
		t.Errorf("keep.txt still there after the client allowed its deletion: %v", err)
	}
}

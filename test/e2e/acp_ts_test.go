package e2e

import (
	"bytes"
	"context"
	"fmt"
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
// TypeScript SDK's client: queued prompts answered in order (20 rounds), one id per
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
	var steps []llmtest.Step
	for i := range rounds {
		steps = append(steps,
			// Slow enough for the second prompt to arrive while it runs.
			llmtest.Step{When: fmt.Sprintf("first question (%d)", i), Latency: llmtest.Duration(600 * time.Millisecond), Text: fmt.Sprintf("first answer (%d)", i)},
			llmtest.Step{When: fmt.Sprintf("second question (%d)", i), Text: fmt.Sprintf("second answer (%d)", i)})
	}
	steps = append(steps, []llmtest.Step{
		{When: "delete keep.txt", ToolCalls: []llmtest.ToolCall{{ID: "call_rm_ts", Name: "ExecuteCommand", Arguments: llmtest.Args(map[string]any{"command": "rm keep.txt"})}}},
		{When: "Exit code", Text: "Deleted keep.txt."},
	}...)
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

// TestACPTerminalKeepsTheSandbox: with an editor that offers terminals
// (the TypeScript SDK's client, spawning what terminal/create asks in its
// own environment), an approved command runs in the editor's terminal and
// its output reaches the model; a rejected one never reaches the
// terminal; and the attack run there stays in Odin's sandbox: its write
// outside the project leaves no canary, and the secret in the editor's
// environment is in no byte of the terminal's output or of what the model
// got.
func TestACPTerminalKeepsTheSandbox(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: commands would not be handed to the editor's terminal")
	}
	node, driver := acpTSDriver(t, "terminal.mjs")
	env, root := acpEnv(t)
	writeFile(t, root, "keep.txt", "keep\n")
	secret := fmt.Sprintf("editor-secret-%d", time.Now().UnixNano())
	canaryDir, err := os.MkdirTemp("/var/tmp", "odin-terminal-canary-") // bwrap's /tmp is private
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(canaryDir)
	canary := filepath.Join(canaryDir, "pwned")
	attack := fmt.Sprintf("echo secret=[$EDITOR_SECRET]; env | sort; d=%s; echo pwned > $d/pwned; echo wrote=$?", canaryDir)
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "delete keep.txt", ToolCalls: []llmtest.ToolCall{llmtest.Call("ExecuteCommand", map[string]any{"command": "rm keep.txt"})}},
		llmtest.Step{When: "not approved", Text: "I was not allowed to."},
		llmtest.Step{When: "list the project", ToolCalls: []llmtest.ToolCall{llmtest.Call("ExecuteCommand", map[string]any{"command": "echo visible-output; ls"})}},
		llmtest.Step{When: "visible-output", Text: "Listed."},
		llmtest.Step{When: "try to escape", ToolCalls: []llmtest.ToolCall{llmtest.Call("ExecuteCommand", map[string]any{"command": attack})}},
		llmtest.Step{When: "secret=[", Text: "Tried."},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL(), "EDITOR_SECRET="+secret)
	outFile := filepath.Join(t.TempDir(), "terminal-output.txt")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, driver, filepath.Join(binDir, "odin"), root, outFile)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("the TypeScript client failed: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "keep.txt")); err != nil {
		t.Errorf("keep.txt is gone although the user rejected its deletion: %v", err)
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Errorf("the command run in the editor's terminal wrote outside the project: %v", err)
	}
	termOut, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(termOut), "secret=[]") || !strings.Contains(string(termOut), "wrote=1") {
		t.Errorf("the attack did not run in the terminal as expected:\n%s", termOut)
	}
	reqs := srv.RequestsFor("orchestrator")
	var seen strings.Builder
	for _, r := range reqs {
		seen.Write(r.Raw)
	}
	if !strings.Contains(seen.String(), "visible-output") {
		t.Errorf("the terminal's output did not reach the model")
	}
	for what, b := range map[string][]byte{"the terminal output": termOut, "the model's requests": []byte(seen.String()), "the client's output": out} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the editor's secret is in %s", what)
		}
	}
}

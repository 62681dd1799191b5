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

// acpTSVersion is the npm package of the ACP TypeScript SDK the test installs.
const acpTSVersion = "@agentclientprotocol/sdk@2.4.0"

// TestACPTypeScriptClient drives `odin acp` with a client nobody here wrote:
// the protocol's TypeScript SDK from npm, installed into a temporary
// directory. It is skipped, saying why, where node or npm is missing or
// the install fails (no registry).
func TestACPTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: skipping the TypeScript ACP client test")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: skipping the TypeScript ACP client test")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", dir, acpTSVersion)
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("npm install %s failed (no registry?): skipping: %v\n%s", acpTSVersion, err, out)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "acpts", "drive.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	driver := filepath.Join(dir, "drive.mjs") // beside node_modules, so the import resolves
	if err := os.WriteFile(driver, src, 0o644); err != nil {
		t.Fatal(err)
	}

	env, root := acpEnv(t)
	srv, err := llmtest.Serve("127.0.0.1:0", acpScript(root))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	writeFile(t, root, "main.go", "package main\n\nfunc main() {}\n")
	writeFile(t, root, "keep.txt", "keep\n")

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

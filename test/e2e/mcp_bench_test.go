package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// BenchmarkFirstRequestMCP measures the time from starting `odin run` to
// the scripted server receiving the first model request, with no MCP
// server, with three lazy servers (their tool lists remembered from a
// first run: none starts) and with three eager ones (all start; the run
// waits for none whose tools it knows). Target: lazy no more than 5 ms
// slower than none.
func BenchmarkFirstRequestMCP(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		servers int
		startup string
	}{{"none", 0, ""}, {"3-lazy", 3, "lazy"}, {"3-eager", 3, "eager"}} {
		b.Run(c.name, func(b *testing.B) {
			work := b.TempDir()
			// The fixture server is this test binary under its helper name.
			fixture := filepath.Join(work, "mcp-fixture")
			if err := os.Symlink(exe, fixture); err != nil {
				b.Fatal(err)
			}
			var cfg strings.Builder
			if c.servers > 0 {
				cfg.WriteString("mcp:\n  servers:\n")
				for i := range c.servers {
					fmt.Fprintf(&cfg, "    s%d:\n      command: %s\n      startup: %s\n", i, fixture, c.startup)
				}
			}
			if err := os.MkdirAll(filepath.Join(work, ".config", "odin"), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(work, ".config", "odin", "odin.yaml"), []byte(cfg.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			script := llmtest.NewScript()
			for range b.N + 1 {
				script.Add("orchestrator", llmtest.Reply("ok"))
			}
			srv := llmtest.NewServer(b, script)
			env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "HOME="+filepath.Join(work, ".home"),
				"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"), "NO_COLOR=1")
			run := func() time.Duration {
				cmd := exec.Command(filepath.Join(binDir, "odin"), "run", "-q", "hi")
				cmd.Dir, cmd.Env = work, env
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("odin run: %v\n%s", err, out)
				}
				reqs := srv.RequestsFor("orchestrator")
				return reqs[len(reqs)-1].Time.Sub(start)
			}
			run() // fills the tool-list cache and the state database
			b.ResetTimer()
			var total time.Duration
			for range b.N {
				total += run()
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-first-request")
		})
	}
}

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// conformanceScenarios are the suite's client scenarios Odin's MCP client
// must pass, but for auth/* (the OAuth client's own test runs those).
var conformanceScenarios = []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"}

// conformanceShim lets the suite (which imports fs.globSync, Node 22's)
// load on Node 20: an import hook gives its modules an fs with a
// globSync, Node's own where there is one. The client scenarios never
// call it.
const conformanceShim = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(` + "`" + `
const shim = 'data:text/javascript,' + encodeURIComponent("export * from 'node:fs'; import fs from 'node:fs'; export default fs; export const globSync = fs.globSync ?? (() => { throw new Error('fs.globSync needs Node 22'); });");
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL && context.parentURL.includes('/@modelcontextprotocol/conformance/')) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
` + "`" + `));
`

// writeConformanceShim writes conformanceShim into a test directory and
// returns its path, for node's --import.
func writeConformanceShim(t *testing.T) string {
	t.Helper()
	shim := filepath.Join(t.TempDir(), "shim.mjs")
	if err := os.WriteFile(shim, []byte(conformanceShim), 0o644); err != nil {
		t.Fatal(err)
	}
	return shim
}

// conformanceCheck is one check the suite recorded in a checks.json.
type conformanceCheck struct {
	ID, Status, ErrorMessage string
}

// conformanceChecks reads every checks.json the suite wrote under dir
// (--output-dir: <scenario>-<time>/checks.json, or checks.json itself).
func conformanceChecks(t *testing.T, dir string) []conformanceCheck {
	t.Helper()
	var all []conformanceCheck
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "checks.json" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		all = append(all, checks...)
		return nil
	})
	return all
}

// TestMCPConformanceClient runs the MCP conformance suite's client
// scenarios against Odin's MCP client (testdata/conformance-client: the
// Manager as odin wires it, answering a form with its defaults through
// the session's bus elicitor). Each scenario's every check must succeed.
func TestMCPConformanceClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node")
	}
	index, why := conformanceSuite()
	if index == "" {
		t.Skip(why)
	}
	work := t.TempDir()
	client := filepath.Join(work, "conformance-client")
	build := exec.Command("go", "build", "-o", client, "./testdata/conformance-client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the client: %v\n%s", err, out)
	}
	shim := writeConformanceShim(t)
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command("node", "--import", shim, index, "client", "--command", client, "--scenario", sc, "--output-dir", filepath.Join(out, "results"))
			cmd.Dir = out
			b, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(b), "OVERALL: PASSED") {
				t.Fatalf("scenario %s: %v\n%s", sc, err, b)
			}
			checks := conformanceChecks(t, filepath.Join(out, "results"))
			if len(checks) == 0 {
				t.Fatalf("scenario %s wrote no checks.json\n%s", sc, b)
			}
			passed := 0
			for _, c := range checks {
				switch c.Status {
				case "SUCCESS":
					passed++
				case "FAILURE", "WARNING":
					t.Errorf("scenario %s: check %s %s: %s", sc, c.ID, c.Status, c.ErrorMessage)
				}
			}
			if passed == 0 {
				t.Errorf("scenario %s: no check succeeded\n%s", sc, b)
			}
			t.Logf("scenario %s: %d checks passed", sc, passed)
		})
	}
}

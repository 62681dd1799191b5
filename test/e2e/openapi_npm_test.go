package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// swaggerParser is the npm validator the published document must pass: a
// second, independent implementation beside kin-openapi (internal/serve),
// the one most JavaScript client generators parse documents with.
const swaggerParser = "@apidevtools/swagger-parser@13.1.0"

// TestOpenAPIPassesSwaggerParser validates internal/serve/openapi.yaml with
// swagger-parser from npm (dereferencing every $ref and checking the
// document against the OpenAPI schema). Skipped, saying why, where node or
// npm is missing or the registry cannot be reached.
func TestOpenAPIPassesSwaggerParser(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: skipping the npm OpenAPI validator")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: skipping the npm OpenAPI validator")
	}
	doc, err := filepath.Abs(filepath.Join("..", "..", "internal", "serve", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", dir, swaggerParser)
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("npm install %s failed (no registry?): skipping: %v\n%s", swaggerParser, err, out)
	}
	script := filepath.Join(dir, "validate.js")
	if err := os.WriteFile(script, []byte(`
const SwaggerParser = require("@apidevtools/swagger-parser");
SwaggerParser.validate(process.argv[2])
  .then(api => { console.log("valid:", api.info.title); })
  .catch(err => { console.error(err.message); process.exit(1); });
`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(ctx, node, script, doc)
	run.Dir = dir
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("swagger-parser rejects openapi.yaml: %v\n%s", err, out)
	}
}

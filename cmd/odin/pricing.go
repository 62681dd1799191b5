package main

import (
	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/models"
	"github.com/odin-code/odin/messages"
)

// catalog is the model catalogue shipped in the binary, parsed once per
// app. A catalogue that does not parse (a broken build) leaves every model
// to odin.yaml alone. Safe for concurrent use: startSession parses it in
// the background while the store opens.
func (a *app) catalog() *models.Catalog {
	a.catOnce.Do(func() {
		c, err := models.New()
		if err != nil {
			a.log.Warn().Err(err).Msg("model catalogue")
			c, _ = models.Parse([]byte(`{"models":[]}`))
		}
		a.cat = c
	})
	return a.cat
}

// priceFor decides what a model costs. In order: a price set in odin.yaml
// (model_info.<id>.price); the catalogue's; free when odin.yaml describes
// the model without a price (local models); otherwise unknown.
func (a *app) priceFor(ref config.ModelRef) (price config.Price, known bool, entry models.Model, inCatalog bool) {
	entry, inCatalog = a.catalog().Lookup(ref.ID, ref.ProviderName)
	switch {
	case ref.Price != (config.Price{}):
		return withCachedPrice(ref.Price), true, entry, inCatalog
	case inCatalog && entry.Priced:
		return withCachedPrice(config.Price{Input: entry.Input, CachedInput: entry.CachedInput, Output: entry.Output}), true, entry, inCatalog
	case ref.Known:
		return config.Price{}, true, entry, inCatalog
	}
	return config.Price{}, false, entry, inCatalog
}

// withCachedPrice charges cached input tokens the input price when no
// cache discount is listed (as config.Price.Cost does), rather than nothing.
func withCachedPrice(p config.Price) config.Price {
	if p.CachedInput == 0 {
		p.CachedInput = p.Input
	}
	return p
}

// applyCatalog completes m with the catalogue: its price when odin.yaml
// sets none, and its context window when odin.yaml does not describe the
// model. The caller holds a.mu.
func (a *app) applyCatalog(m *actors.Model, ref config.ModelRef) {
	price, known, entry, inCatalog := a.priceFor(ref)
	m.Price, m.PriceUnknown = price, !known
	m.NoImages = !takesImages(ref, entry, inCatalog)
	if !ref.Known && inCatalog && entry.Context > 0 {
		m.ContextWindow = entry.Context
	}
}

// takesImages decides whether a model takes images: model_info's images
// when set, else the catalogue's entry; a model neither knows is assumed
// to (a provider that refuses says so in its own error).
func takesImages(ref config.ModelRef, entry models.Model, inCatalog bool) bool {
	switch {
	case ref.Images != nil:
		return *ref.Images
	case inCatalog:
		return entry.Images
	}
	return true
}

// modelPriced reports whether a model id (as recorded in the store) has a
// known price, for listings of stored usage.
func (a *app) modelPriced(id string) bool {
	if id == "" {
		return true
	}
	ref, _ := a.cfg.ResolveModel(id)
	if ref.ID == "" {
		ref.ID = id
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, known, _, _ := a.priceFor(ref)
	return known
}

// totalCostUSD is the json result's total_cost_usd: null when any of the
// tokens had no known price, so that tooling never reads a guess as a sum.
func totalCostUSD(u messages.Usage) *float64 {
	if u.CostUnknown {
		return nil
	}
	c := u.Cost
	return &c
}

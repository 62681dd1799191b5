package models

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Model is one catalogue entry. Prices are US dollars per million tokens.
type Model struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	// Priced is false when the source gives no price: the cost is unknown,
	// not zero.
	Priced      bool    `json:"priced,omitempty"`
	Input       float64 `json:"input,omitempty"`
	Output      float64 `json:"output,omitempty"`
	CachedInput float64 `json:"cached_input,omitempty"`
	Context     int     `json:"context,omitempty"`
	MaxOutput   int     `json:"max_output,omitempty"`
	Images      bool    `json:"images,omitempty"`
	Tools       bool    `json:"tools,omitempty"`
}

// File is catalog.json: the package it was built from and the models.
type File struct {
	Source string  `json:"source"`
	Models []Model `json:"models"`
}

// Catalog is a parsed catalogue, indexed for Lookup.
type Catalog struct {
	source string
	models []Model
	// byID maps a lower-cased id to the indexes of the models with it, one
	// per provider.
	byID map[string][]int
}

// New returns the catalogue built into the binary (catalog.json, compiled
// in as catalog_gen.go by `make models`). A Catalog is read-only, so
// every caller shares one index: odin serve asked for it once per session.
func New() (*Catalog, error) { return builtIn(), nil }

var builtIn = sync.OnceValue(func() *Catalog { return index(embedded) })

// Parse reads a catalogue in catalog.json's format.
func Parse(data []byte) (*Catalog, error) {
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("models: catalogue: %w", err)
	}
	return index(f), nil
}

// index builds the Catalog of f.
func index(f File) *Catalog {
	c := &Catalog{source: f.Source, models: f.Models, byID: make(map[string][]int, len(f.Models))}
	for i, m := range f.Models {
		k := strings.ToLower(m.ID)
		c.byID[k] = append(c.byID[k], i)
	}
	return c
}

// Source names the package and version the catalogue was built from.
func (c *Catalog) Source() string { return c.source }

// All returns the models, sorted by provider then id. The caller may keep
// the slice; it is a copy.
func (c *Catalog) All() []Model { return append([]Model(nil), c.models...) }

// firstParty are the providers whose price is a model's list price: when
// an id is served by several providers and none is named, theirs wins.
var firstParty = []string{"openai", "anthropic", "google", "mistral", "deepseek", "xai", "moonshotai", "alibaba", "zhipuai", "openrouter"}

// Lookup finds the model a user means by id, as typed in odin.yaml or
// --model: "gpt-4.1", "openai/gpt-4.1", "anthropic/claude-sonnet-4" (an
// OpenRouter id), "claude-sonnet-4" (its newest dated release). provider
// is the odin.yaml provider key serving it ("openrouter", "openai",
// "groq"...), preferred when it names a catalogue provider. Matching
// ignores case. The order: the id under that provider, under the provider
// its "vendor/" prefix names, under a first-party provider, under any; then
// the id without its "vendor/" prefix; then a dated release. An entry with
// a price wins over one without wherever it comes in that order.
func (c *Catalog) Lookup(id, provider string) (Model, bool) {
	if c == nil || id == "" {
		return Model{}, false
	}
	var unpriced *Model
	for _, find := range []func() (Model, bool){
		func() (Model, bool) { return c.lookupExact(id, provider) },
		func() (Model, bool) {
			if vendor, rest, ok := strings.Cut(id, "/"); ok && rest != "" {
				return c.lookupExact(rest, vendor, provider)
			}
			return Model{}, false
		},
		func() (Model, bool) { return c.lookupDated(id, provider) },
	} {
		m, ok := find()
		if ok && m.Priced {
			return m, true
		}
		if ok && unpriced == nil {
			unpriced = &m
		}
	}
	if unpriced != nil {
		return *unpriced, true
	}
	return Model{}, false
}

// lookupExact finds id under the first of the preferred providers that
// lists it with a price, then under any, priced first.
func (c *Catalog) lookupExact(id string, preferred ...string) (Model, bool) {
	idx := c.byID[strings.ToLower(id)]
	if len(idx) == 0 {
		return Model{}, false
	}
	vendor, _, _ := strings.Cut(id, "/")
	var prefs []string
	for _, p := range preferred {
		prefs = append(prefs, strings.ToLower(p))
	}
	prefs = append(append(prefs, strings.ToLower(vendor)), firstParty...)
	for _, p := range prefs {
		for _, i := range idx {
			if c.models[i].Provider == p && c.models[i].Priced {
				return c.models[i], true
			}
		}
	}
	for _, i := range idx {
		if c.models[i].Priced {
			return c.models[i], true
		}
	}
	return c.models[idx[0]], true
}

// lookupDated finds "claude-sonnet-4" as its newest dated release
// ("claude-sonnet-4-20250514"), as providers' aliases resolve it.
func (c *Catalog) lookupDated(id, provider string) (Model, bool) {
	prefix := strings.ToLower(id) + "-"
	var best Model
	found := false
	for _, m := range c.models {
		rest, ok := strings.CutPrefix(strings.ToLower(m.ID), prefix)
		if !ok || len(rest) != 8 || strings.Trim(rest, "0123456789") != "" {
			continue
		}
		better := !found || (m.Priced && !best.Priced) || (m.Priced == best.Priced &&
			(rank(m.Provider, provider) < rank(best.Provider, provider) ||
				(rank(m.Provider, provider) == rank(best.Provider, provider) && m.ID > best.ID)))
		if better {
			best, found = m, true
		}
	}
	return best, found
}

// rank orders providers for lookupDated: the named one, then first-party
// ones, then the rest.
func rank(p, provider string) int {
	if strings.EqualFold(p, provider) {
		return 0
	}
	for i, f := range firstParty {
		if p == f {
			return i + 1
		}
	}
	return len(firstParty) + 1
}

// Filter returns the models whose provider/id contains every word of
// query (ignoring case), sorted by provider then id.
func (c *Catalog) Filter(query string) []Model {
	words := strings.Fields(strings.ToLower(query))
	var out []Model
	for _, m := range c.models {
		hay := strings.ToLower(m.Provider + "/" + m.ID)
		ok := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].ID < out[j].ID
	})
	return out
}

package config

import (
	"fmt"
	"maps"
	"net/url"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// ResolvedProvider is a provider ready to be dialled: what an llm client
// needs, with the API key read from the environment.
type ResolvedProvider struct {
	// Name is the provider's key in providers.
	Name    string
	BaseURL string
	// APIKey is the value of $APIKeyEnv; empty for servers that need none.
	APIKey      string
	APIKeyEnv   string
	Timeout     time.Duration
	IdleTimeout time.Duration
	Budget      time.Duration
	MaxRetries  int
	// Headers is a copy; the caller may keep it.
	Headers map[string]string
	// RateLimit is providers.<Name>.rate_limit.
	RateLimit RateLimit

	// IdleConnTimeout is providers.<Name>.idle_conn_timeout.
	IdleConnTimeout time.Duration
}

// ModelRef is a model resolved to the provider that serves it and what
// Odin knows about it.
type ModelRef struct {
	// ID is the model id sent to the provider.
	ID string
	// ProviderName is the provider's key in providers.
	ProviderName string
	Provider     ResolvedProvider
	// ContextWindow is from model_info, else DefaultContextWindow.
	ContextWindow int
	// MaxOutput caps completion tokens; 0 lets the provider decide.
	MaxOutput int
	// Price is from model_info; zero for models it does not describe.
	Price Price
	// Known reports whether model_info describes the model.
	Known bool
	// RateLimit is model_info.<ID>.rate_limit: zero when the model shares
	// its provider's quota.
	RateLimit RateLimit
	// Images is model_info's images: nil when it does not say.
	Images *bool
}

// ResolveModel resolves "main", "small" or an explicit model id. The model's
// provider is model_info.<id>.provider, else the top-level provider. An
// error names the model and the missing piece; a provider that cannot
// work (no API key and OpenAI's base_url) gives an error matching
// ErrNoProvider (errors.Is) whose text says what to set.
func (c *Config) ResolveModel(roleOrID string) (ModelRef, error) {
	id := roleOrID
	switch roleOrID {
	case "main":
		id = c.Models.Main
	case "small":
		id = c.Models.Small
	}
	if id == "" {
		if roleOrID == "" {
			return ModelRef{}, fmt.Errorf("config: resolve model: no model named")
		}
		return ModelRef{}, fmt.Errorf("config: resolve model %q: models.%s is not set", roleOrID, roleOrID)
	}
	info, known := c.modelInfo(id)
	name := info.Provider
	if name == "" {
		name = c.Provider
	}
	p, ok := c.Providers[name]
	if !ok {
		return ModelRef{}, fmt.Errorf("config: model %q: provider %q is not defined under providers", id, name)
	}
	ref := ModelRef{
		ID:           id,
		ProviderName: name,
		Provider: ResolvedProvider{
			Name:        name,
			BaseURL:     p.BaseURL,
			APIKey:      c.APIKey(name),
			APIKeyEnv:   p.APIKeyEnv,
			Timeout:     p.Timeout,
			IdleTimeout: p.IdleTimeout,
			Budget:      p.Budget,
			MaxRetries:  p.MaxRetries,
			Headers:     maps.Clone(p.Headers),
			RateLimit:   p.RateLimit,
		},
		RateLimit:     info.RateLimit,
		ContextWindow: info.ContextWindow,
		MaxOutput:     info.MaxOutput,
		Price:         info.Price,
		Known:         known,
		Images:        info.Images,
	}
	ref.Provider.IdleConnTimeout = p.IdleConnTimeout
	if ref.ContextWindow <= 0 {
		ref.ContextWindow = DefaultContextWindow
	}
	if ref.Provider.APIKey == "" && needsKey(p.BaseURL) {
		missing := "it names no api_key_env"
		if p.APIKeyEnv != "" {
			missing = "$" + p.APIKeyEnv + " is not set"
		}
		return ref, fmt.Errorf("config: model %q: provider %q (%s) has no API key (%s): %w",
			id, name, p.BaseURL, missing, ErrNoProvider)
	}
	return ref, nil
}

// modelInfo finds a model's entry by exact id, else ignoring case.
func (c *Config) modelInfo(id string) (ModelInfo, bool) {
	if m, ok := c.ModelInfo[id]; ok {
		return m, true
	}
	for k, m := range c.ModelInfo {
		if strings.EqualFold(k, id) {
			return m, true
		}
	}
	return ModelInfo{}, false
}

// APIKey returns the key of the named provider, read from the variable its
// api_key_env names through c.Env; "" when it names none, the variable is
// unset, or there is no such provider.
func (c *Config) APIKey(provider string) string {
	p, ok := c.Providers[provider]
	if !ok || p.APIKeyEnv == "" {
		return ""
	}
	return c.Env.lookup(p.APIKeyEnv)
}

// Usable reports whether the named provider can work: it has an API key,
// or its base_url is not api.openai.com (local servers need no key).
func (c *Config) Usable(provider string) bool {
	p, ok := c.Providers[provider]
	return ok && (c.APIKey(provider) != "" || !needsKey(p.BaseURL))
}

// needsKey reports whether base_url is OpenAI's own API, the one endpoint
// known to refuse every request without a key.
func needsKey(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// Cost is the price in US dollars of a call that read prompt tokens (of
// which cached were served from the provider's cache) and wrote output
// tokens. Cached tokens cost CachedInput, or Input when no cached price is
// set.
func (p Price) Cost(prompt, cached, output int64) float64 {
	cached = min(max(cached, 0), prompt)
	cachedPrice := p.CachedInput
	if cachedPrice == 0 {
		cachedPrice = p.Input
	}
	return (float64(prompt-cached)*p.Input + float64(cached)*cachedPrice + float64(output)*p.Output) / 1e6
}

// MatchRiskPath reports the first of risk_paths matching rel, a
// slash-separated path relative to the project root. Matching ignores
// case, so "Auth/Login.go" matches "**/*auth*/**".
func (q Quality) MatchRiskPath(rel string) (pattern string, ok bool) {
	return matchAny(q.RiskPaths, rel)
}

// MatchPublicAPI reports the first of public_api matching rel, ignoring
// case like MatchRiskPath.
func (q Quality) MatchPublicAPI(rel string) (pattern string, ok bool) {
	return matchAny(q.PublicAPI, rel)
}

func matchAny(globs []string, rel string) (string, bool) {
	rel = strings.ToLower(strings.TrimPrefix(rel, "./"))
	for _, g := range globs {
		if m, err := doublestar.Match(strings.ToLower(g), rel); err == nil && m {
			return g, true
		}
	}
	return "", false
}

package config

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func resolveFixture() *Config {
	c := Default()
	c.Providers["ollama"] = Provider{BaseURL: "http://localhost:11434/v1", Timeout: 10 * time.Minute, IdleTimeout: 90 * time.Second, Budget: 15 * time.Minute, MaxRetries: 1,
		Headers: map[string]string{"X-Client": "odin"}}
	c.Providers["gw"] = Provider{BaseURL: "https://gw.example/v1", APIKeyEnv: "GW_KEY", Timeout: time.Minute}
	c.ModelInfo["qwen2.5-coder:7b"] = ModelInfo{Provider: "ollama", ContextWindow: 32768}
	c.ModelInfo["Team/Model"] = ModelInfo{Provider: "gw", ContextWindow: 64000, MaxOutput: 4096, Price: Price{Input: 1, Output: 2}}
	c.Models.Small = "qwen2.5-coder:7b"
	c.Env = envOf(map[string]string{"OPENAI_API_KEY": " sk-openai \n", "GW_KEY": "gw-secret"})
	return c
}

func TestResolveModel(t *testing.T) {
	openai := ResolvedProvider{Name: "openai", BaseURL: OpenAIBaseURL, APIKey: "sk-openai", APIKeyEnv: "OPENAI_API_KEY", Timeout: 5 * time.Minute, IdleTimeout: 90 * time.Second, Budget: 15 * time.Minute, MaxRetries: 4}
	tests := []struct {
		in   string
		want ModelRef
	}{
		{"main", ModelRef{ID: "gpt-4o", ProviderName: "openai", Provider: openai, ContextWindow: 128000, MaxOutput: 16384,
			Price: Price{Input: 2.5, CachedInput: 1.25, Output: 10}, Known: true}},
		{"small", ModelRef{ID: "qwen2.5-coder:7b", ProviderName: "ollama", ContextWindow: 32768, Known: true,
			Provider: ResolvedProvider{Name: "ollama", BaseURL: "http://localhost:11434/v1", Timeout: 10 * time.Minute, IdleTimeout: 90 * time.Second, Budget: 15 * time.Minute, MaxRetries: 1,
				Headers: map[string]string{"X-Client": "odin"}}}},
		{"gpt-4.1", ModelRef{ID: "gpt-4.1", ProviderName: "openai", Provider: openai, ContextWindow: 1047576, MaxOutput: 32768,
			Price: Price{Input: 2, CachedInput: 0.5, Output: 8}, Known: true}},
		// Ids match model_info ignoring case, but the id sent is the one asked for.
		{"team/model", ModelRef{ID: "team/model", ProviderName: "gw", ContextWindow: 64000, MaxOutput: 4096, Price: Price{Input: 1, Output: 2}, Known: true,
			Provider: ResolvedProvider{Name: "gw", BaseURL: "https://gw.example/v1", APIKey: "gw-secret", APIKeyEnv: "GW_KEY", Timeout: time.Minute}}},
		// A model model_info does not know runs on the top-level provider
		// with the default window.
		{"gpt-5-preview", ModelRef{ID: "gpt-5-preview", ProviderName: "openai", Provider: openai, ContextWindow: DefaultContextWindow}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := resolveFixture().ResolveModel(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveModelHeadersAreACopy(t *testing.T) {
	c := resolveFixture()
	ref, err := c.ResolveModel("small")
	if err != nil {
		t.Fatal(err)
	}
	ref.Provider.Headers["X-Client"] = "changed"
	if c.Providers["ollama"].Headers["X-Client"] != "odin" {
		t.Error("changing the resolved headers changed the config")
	}
}

func TestResolveModelErrors(t *testing.T) {
	tests := []struct {
		name     string
		change   func(c *Config)
		in       string
		want     string
		provider bool // errors.Is ErrNoProvider
	}{
		{name: "empty", in: "", want: "config: resolve model: no model named"},
		{name: "unset role", change: func(c *Config) { c.Models.Main = "" }, in: "main", want: `config: resolve model "main": models.main is not set`},
		{name: "undefined provider", change: func(c *Config) { c.ModelInfo["x"] = ModelInfo{Provider: "gone"} }, in: "x",
			want: `config: model "x": provider "gone" is not defined under providers`},
		{name: "no key for OpenAI", change: func(c *Config) { c.Env = envOf(nil) }, in: "main", provider: true,
			want: `config: model "gpt-4o": provider "openai" (https://api.openai.com/v1) has no API key ($OPENAI_API_KEY is not set): ` + ErrNoProvider.Error()},
		{name: "no key variable for OpenAI", change: func(c *Config) {
			p := c.Providers["openai"]
			p.APIKeyEnv = ""
			c.Providers["openai"] = p
		}, in: "main", provider: true,
			want: `config: model "gpt-4o": provider "openai" (https://api.openai.com/v1) has no API key (it names no api_key_env): ` + ErrNoProvider.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := resolveFixture()
			if tt.change != nil {
				tt.change(c)
			}
			_, err := c.ResolveModel(tt.in)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error = %v\nwant    %s", err, tt.want)
			}
			if errors.Is(err, ErrNoProvider) != tt.provider {
				t.Errorf("errors.Is(err, ErrNoProvider) = %v", !tt.provider)
			}
		})
	}
}

func TestErrNoProviderTellsWhatToSet(t *testing.T) {
	for _, s := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "providers.<name>.base_url", "providers.<name>.api_key_env", "http://localhost:11434/v1"} {
		if !strings.Contains(ErrNoProvider.Error(), s) {
			t.Errorf("ErrNoProvider does not mention %s", s)
		}
	}
}

func TestAPIKeyAndUsable(t *testing.T) {
	c := resolveFixture()
	c.Providers["keyless-openai"] = Provider{BaseURL: "https://API.OpenAI.com:443/v1", Timeout: time.Minute}
	tests := []struct {
		provider string
		key      string
		usable   bool
	}{
		{"openai", "sk-openai", true},
		{"gw", "gw-secret", true},
		{"ollama", "", true},          // local: no key needed
		{"keyless-openai", "", false}, // OpenAI's host in any spelling needs one
		{"missing", "", false},
	}
	for _, tt := range tests {
		if got := c.APIKey(tt.provider); got != tt.key {
			t.Errorf("APIKey(%s) = %q, want %q", tt.provider, got, tt.key)
		}
		if got := c.Usable(tt.provider); got != tt.usable {
			t.Errorf("Usable(%s) = %v, want %v", tt.provider, got, tt.usable)
		}
	}
}

func TestAPIKeyWithoutEnvUsesTheProcessEnvironment(t *testing.T) {
	t.Setenv("ODIN_TEST_CONFIG_KEY", "from-process")
	c := Default()
	c.Providers["p"] = Provider{BaseURL: "http://x/v1", APIKeyEnv: "ODIN_TEST_CONFIG_KEY", Timeout: time.Second}
	if got := c.APIKey("p"); got != "from-process" {
		t.Errorf("APIKey = %q", got)
	}
}

func TestPriceCost(t *testing.T) {
	p := Price{Input: 2.5, CachedInput: 1.25, Output: 10}
	tests := []struct {
		name                   string
		price                  Price
		prompt, cached, output int64
		want                   float64
	}{
		{"plain", p, 1_000_000, 0, 1_000_000, 12.5},
		{"cached", p, 1_000_000, 400_000, 0, 0.6*2.5 + 0.4*1.25},
		{"no cached price bills input", Price{Input: 2, Output: 4}, 1_000_000, 500_000, 0, 2},
		{"cached beyond prompt is capped", p, 100, 1000, 0, 100 * 1.25 / 1e6},
		{"free", Price{}, 5000, 0, 5000, 0},
	}
	for _, tt := range tests {
		if got := tt.price.Cost(tt.prompt, tt.cached, tt.output); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: Cost = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDefaultRiskPaths(t *testing.T) {
	q := Default().Quality
	tests := []struct {
		path string
		risk bool
	}{
		{"internal/auth/login.go", true},
		{"Auth/Login.go", true},
		{"pkg/oauth.go", true},
		{"services/payments/stripe.go", true},
		{"SECURITY.md", true},
		{"internal/security/policy.go", true},
		{"config/secrets.yaml", true},
		{"lib/crypto/aes.go", true},
		{"aws/credentials", true},
		{".env", true},
		{".env.local", true},
		{"deploy/.env.production", true},
		{"./.ENV", true},
		{"cmd/odin/main.go", false},
		{"README.md", false},
		{"internal/store/sqlite.go", false},
		{"environment.go", false},
	}
	for _, tt := range tests {
		pattern, got := q.MatchRiskPath(tt.path)
		if got != tt.risk {
			t.Errorf("MatchRiskPath(%q) = %q, %v; want %v", tt.path, pattern, got, tt.risk)
		}
	}
	for _, g := range q.RiskPaths {
		if !strings.HasPrefix(g, "**/") {
			t.Errorf("risk glob %q does not match at any depth", g)
		}
	}
}

func TestMatchPublicAPI(t *testing.T) {
	q := Default().Quality
	for path, want := range map[string]bool{
		"api/v1/service.proto": true,
		"docs/openapi.yaml":    true,
		"schema.graphql":       true,
		"Swagger.JSON":         true,
		"main.go":              false,
	} {
		if _, got := q.MatchPublicAPI(path); got != want {
			t.Errorf("MatchPublicAPI(%q) = %v, want %v", path, got, want)
		}
	}
}

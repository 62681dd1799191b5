package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultsRoundTripThroughTheSchema(t *testing.T) {
	// Every field kind of Config must be one the normaliser handles: the
	// built-in defaults, as a raw tree, pass through it unchanged.
	tree := toTree(reflect.ValueOf(Default()).Elem())
	n := &normalizer{source: "test"}
	got, ok := n.node("", "", tree, configType)
	if !ok || len(n.problems) > 0 {
		t.Fatalf("normalising the defaults: %v", n.problems)
	}
	if diff := cmp.Diff(tree, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"main", "main", 0},
		{"mian", "main", 1},
		{"timout", "timeout", 1},
		{"", "abc", 3},
		{"model", "models", 1},
		{"colour", "provider", 6},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestResolveKey(t *testing.T) {
	tests := []struct {
		key       string
		wantParts []string
		wantTmpl  string
		wantBad   string
	}{
		{key: "mode", wantParts: []string{"mode"}, wantTmpl: "mode"},
		{key: "models.main", wantParts: []string{"models", "main"}, wantTmpl: "models.main"},
		{key: "model_info.gpt-4.1.price.input", wantParts: []string{"model_info", "gpt-4.1", "price", "input"}, wantTmpl: "model_info.*.price.input"},
		{key: "model_info.gpt-4.1", wantParts: []string{"model_info", "gpt-4.1"}, wantTmpl: "model_info.*"},
		{key: "providers.openai.headers.X-Title", wantParts: []string{"providers", "openai", "headers", "X-Title"}, wantTmpl: "providers.*.headers.*"},
		{key: "agents.code", wantParts: []string{"agents", "code"}, wantTmpl: "agents.*"},
		{key: "models.mian", wantBad: "models.mian"},
		{key: "web.timeout.x", wantBad: "web.timeout.x"},
		{key: "nope", wantBad: "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			parts, tmpl, _, bad, msg := resolveKey(strings.Split(tt.key, "."), configType, "")
			if bad != tt.wantBad {
				t.Fatalf("bad key = %q (%s), want %q", bad, msg, tt.wantBad)
			}
			if bad != "" {
				return
			}
			if diff := cmp.Diff(tt.wantParts, parts); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			if got := strings.Join(tmpl, "."); got != tt.wantTmpl {
				t.Errorf("template = %q, want %q", got, tt.wantTmpl)
			}
		})
	}
}

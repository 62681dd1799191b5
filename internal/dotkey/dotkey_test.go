package dotkey

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnclosing(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"", nil},
		{"mode", []string{"mode"}},
		{"agents.code.timeout", []string{"agents.code.timeout", "agents.code", "agents"}},
		{"permissions.allow[2]", []string{"permissions.allow[2]", "permissions.allow", "permissions"}},
		{"hooks.pre[0].command", []string{"hooks.pre[0].command", "hooks.pre[0]", "hooks.pre", "hooks"}},
		{"mcp.servers.a.b", []string{"mcp.servers.a.b", "mcp.servers.a", "mcp.servers", "mcp"}},
		// A key that starts with an index has nothing above its index.
		{"[1].x", []string{"[1].x", "[1]"}},
	} {
		got := slices.Collect(Enclosing(tc.key))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Enclosing(%q) (-want +got):\n%s", tc.key, diff)
		}
	}
}

func TestEnclosingStopsWhenAsked(t *testing.T) {
	var got []string
	for k := range Enclosing("a.b.c.d") {
		got = append(got, k)
		if k == "a.b.c" {
			break
		}
	}
	if diff := cmp.Diff([]string{"a.b.c.d", "a.b.c"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLookup(t *testing.T) {
	lines := map[string]int{"agents": 3, "agents.code": 4, "agents.code.tools[1]": 7, "mode": 1}
	for _, tc := range []struct {
		key    string
		want   int
		wantOK bool
	}{
		{"mode", 1, true},
		{"agents.code.tools[1]", 7, true},
		// Not written itself: the nearest enclosing key that is.
		{"agents.code.timeout", 4, true},
		{"agents.code.tools[0]", 4, true},
		{"agents.review.model", 3, true},
		{"providers.openai.base_url", 0, false},
		{"", 0, false},
	} {
		got, ok := Lookup(lines, tc.key)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", tc.key, got, ok, tc.want, tc.wantOK)
		}
	}
}

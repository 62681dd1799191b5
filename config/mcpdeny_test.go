package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mcp.deny_tools adds up over the layers (a project cannot lift a user's
// denial with an empty list), needs no trust, and a pattern that is not
// one is named by its key.
func TestMCPDenyTools(t *testing.T) {
	f := newFixture(t, "mcp:\n  deny_tools: [mcp__github__delete_*]\n", "mcp:\n  deny_tools: []\n")
	cfg, _ := f.load(t, nil, nil)
	if d := cmp.Diff([]string{"mcp__github__delete_*"}, cfg.MCP.DenyTools); d != "" {
		t.Errorf("an empty project list lifted the user's (-want +got):\n%s", d)
	}
	f = newFixture(t, "mcp:\n  deny_tools: [mcp__a__x]\n", "mcp:\n  deny_tools: [mcp__b__*]\n")
	cfg, src := f.load(t, nil, nil)
	if d := cmp.Diff([]string{"mcp__a__x", "mcp__b__*"}, cfg.MCP.DenyTools); d != "" {
		t.Errorf("deny_tools (-want +got):\n%s", d)
	}
	if len(src.ProjectWidens()) != 0 {
		t.Errorf("a project's deny_tools waits for trust: %v", src.ProjectWidens())
	}
	for _, bad := range []string{`"[oops"`, `"github__x"`} {
		f = newFixture(t, "mcp:\n  deny_tools: ["+bad+"]\n", "")
		if _, _, err := Load(f.options(nil, nil)); err == nil || !strings.Contains(err.Error(), "mcp.deny_tools[0]") {
			t.Errorf("deny_tools %s: %v, want an error naming mcp.deny_tools[0]", bad, err)
		}
	}
}

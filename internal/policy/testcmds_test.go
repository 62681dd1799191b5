package policy

import (
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

// The Test agent runs test runners and read-only commands only; anything
// else is refused (not asked), even when an allowed pattern matches it.
func TestTestAgentCommands(t *testing.T) {
	root := t.TempDir()
	g, err := NewGuard(root, GuardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCommands(g, config.Permissions{AllowedCommands: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	test := c.WithGuard(g.ForAgent("test", "t1"))
	code := c.WithGuard(g.ForAgent("code", "c1"))
	for _, tc := range []struct {
		cmd    string
		denied bool
	}{
		{"go test ./...", false},
		{"go test -run TestX ./pkg && cat out.txt", false},
		{"npm test", false},
		{"npx vitest run", false},
		{"python -m pytest -q", false},
		{"cargo test", false},
		{"ls -la", false},
		{"bash -c 'go test ./...'", false},
		{"sed -i s/a/b/ price.go", true},
		{"go test ./... && rm price.go", true},
		{"bash -c 'cp /dev/null price.go'", true},
		{"go test -exec ./evil ./...", true},
		{"go build ./...", true},
		{"python evil.py", true},
		{"./run_tests.sh", true},
	} {
		v := test.Check(tc.cmd, messages.ModeEdit)
		filtered := false
		for _, f := range v.Findings {
			filtered = filtered || f.Rule == RuleAgentFilter
		}
		if got := v.Action == Deny && filtered; got != tc.denied {
			t.Errorf("test agent %q: denied by the agent filter = %v, want %v (verdict %+v)", tc.cmd, got, tc.denied, v)
		}
		if v := code.Check(tc.cmd, messages.ModeEdit); v.Action == Deny {
			t.Errorf("code agent %q: denied (%+v); only the test agent is confined", tc.cmd, v)
		}
	}
}

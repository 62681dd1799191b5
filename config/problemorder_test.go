package config

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProblemsInFileOrder: a file's problems are listed in the order the
// file is read, line then column, not sorted by key (agents.alpha before
// agents.zed before providers), so that the list and the file can be
// walked down together. Each source's problems stay together, the user's
// file before the project's.
func TestProblemsInFileOrder(t *testing.T) {
	const dur = ` (write a number with a unit, such as "90s", "2m" or "1h30m", or whole seconds)`
	for _, tc := range []struct {
		name, user, project string
		want                []string
	}{
		{
			name: "schema",
			project: "providers:\n  openai:\n    base_url: 12\nagents:\n  zed:\n    timeout: nope\n  alpha:\n    timeout: nah\n" +
				"compactoin: 7\n",
			want: []string{
				"odin.yaml:3: providers.openai.base_url: must be a string (got 12)",
				`odin.yaml:6: agents.zed.timeout: invalid duration "nope"` + dur,
				`odin.yaml:8: agents.alpha.timeout: invalid duration "nah"` + dur,
				"odin.yaml:9: compactoin: unknown key (valid keys: provider, providers, models, model_info, mode, max_turns, agents, supervision, budget, runaway, quality, permissions, hooks, context, web, log, store, mcp)",
			},
		},
		{
			// Validation finds these in the struct's order (mode before
			// max_turns before agents, agents by name).
			name: "validation",
			project: "agents:\n  review:\n    timeout: -5s\n  code:\n    timeout: -1s\n" +
				"max_turns: -3\nmode: bogus\n",
			want: []string{
				"odin.yaml:3: agents.review.timeout: must not be negative (got -5s)",
				"odin.yaml:5: agents.code.timeout: must not be negative (got -1s)",
				"odin.yaml:6: max_turns: must be positive (got -3)",
				`odin.yaml:7: mode: must be one of ask, plan, edit (got "bogus")`,
			},
		},
		{
			name:    "one line, by column",
			project: "agents: {zed: {timeout: nope}, alpha: {timeout: nah}}\n",
			want: []string{
				`odin.yaml:1: agents.zed.timeout: invalid duration "nope"` + dur,
				`odin.yaml:1: agents.alpha.timeout: invalid duration "nah"` + dur,
			},
		},
		{
			name:    "user's file first",
			user:    "max_turnz: 1\nagents:\n  b:\n    timeout: x\n",
			project: "zzz: 1\naaa: 2\n",
			want: []string{
				`USER:1: max_turnz: unknown key (did you mean "max_turns"?)`,
				`USER:4: agents.b.timeout: invalid duration "x"` + dur,
				"odin.yaml:1: zzz: unknown key (valid keys: provider, providers, models, model_info, mode, max_turns, agents, supervision, budget, runaway, quality, permissions, hooks, context, web, log, store, mcp)",
				"odin.yaml:2: aaa: unknown key (valid keys: provider, providers, models, model_info, mode, max_turns, agents, supervision, budget, runaway, quality, permissions, hooks, context, web, log, store, mcp)",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.user, tc.project)
			t.Chdir(f.root)
			_, _, err := Load(f.options(nil, nil))
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				if len(w) > 4 && w[:4] == "USER" {
					w = filepath.Join(f.userDir, FileName) + w[4:]
				}
				want[i] = w
			}
			if diff := cmp.Diff(want, problems(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

package policy

import (
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

func newHooks(t *testing.T, root string, hooks map[string][]config.Hook) *Hooks {
	t.Helper()
	h, err := NewHooks(hooks, HooksOptions{Root: root, SessionID: "sess-1"})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHookExit2BlocksToolCall runs a tool through tools.WithHooks with a
// real PreToolUse hook that exits 2: the tool does not run and the model
// gets the hook's stderr.
func TestHookExit2BlocksToolCall(t *testing.T) {
	f := newFixture(t)
	p := newPolicy(t, f, Headless{})
	h := newHooks(t, f.root, map[string][]config.Hook{
		PreToolUse: {{
			Matcher: "ExecuteCommand",
			Command: `grep -q '"command":"make deploy"' && { echo 'deploys go through CI, not the agent' >&2; exit 2; }; exit 0`,
		}},
		PostToolUse: {{Command: "echo post-check passed"}},
	})
	var runs atomic.Int32
	set := tools.NewSet(counted("ExecuteCommand", tool.ClassExecute, &runs)).Map(tools.WithPermission(p), tools.WithHooks(h))
	env := &tool.Env{Root: f.root, Agent: "orchestrator", Mode: "edit", SessionID: "s"}

	res, err := set.Run(t.Context(), env, "ExecuteCommand", json.RawMessage(`{"command":"make deploy"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := tool.Result{Output: "Blocked by a PreToolUse hook: deploys go through CI, not the agent", IsError: true, Denied: true}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("blocked call (-want +got):\n%s", diff)
	}
	res, err = set.Run(t.Context(), env, "ExecuteCommand", json.RawMessage(`{"command":"ls"}`))
	if err != nil || res.IsError || res.Output != "ran ls\n\n[PostToolUse hook]\npost-check passed" {
		t.Errorf("allowed call: %+v, %v", res, err)
	}
	if runs.Load() != 1 {
		t.Errorf("tool ran %d times, want 1", runs.Load())
	}
}

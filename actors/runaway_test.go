package actors

import (
	"context"
	"fmt"
	"testing"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

func stubTool(name string, class tool.Class) tool.Tool {
	return tool.New[struct{}](name, class, name, func(context.Context, *tool.Env, struct{}) (tool.Result, error) {
		return tool.Result{}, nil
	})
}

// The watch tells repeats and stalls from progress: the same call with
// its keys in another order is the same call; a new file, URL, edit or
// test output is progress; a changed result breaks a run of repeats.
func TestRunawayWatch(t *testing.T) {
	set := tools.NewSet(stubTool("ReadFile", tool.ClassRead), stubTool("WebFetch", tool.ClassWeb),
		stubTool("EditTool", tool.ClassWrite), stubTool("ExecuteCommand", tool.ClassExecute), stubTool("Grep", tool.ClassRead))
	out := func(name, args, output string, files ...string) callOutcome {
		return callOutcome{call: llm.ToolCall{Name: name, Arguments: args}, result: tool.Result{Output: output, Files: files}}
	}
	type want struct {
		kind  messages.NoProgressKind
		calls int
	}
	cases := []struct {
		name     string
		id, win  int
		outcomes func(i int) callOutcome
		want     want // zero: never trips in 20 calls
		at       int  // the call it trips at
	}{
		{"same call, keys reordered", 3, 0, func(i int) callOutcome {
			if i%2 == 0 {
				return out("Grep", `{"pattern":"x","path":"."}`, "none")
			}
			return out("Grep", `{"path":".","pattern":"x"}`, "none")
		}, want{messages.NoProgressRepeat, 3}, 3},
		{"same call, changing result", 3, 0, func(i int) callOutcome {
			return out("ExecuteCommand", `{"command":"date"}`, fmt.Sprint(i))
		}, want{}, 0},
		{"new files", 0, 3, func(i int) callOutcome { return out("ReadFile", fmt.Sprintf(`{"file_path":"/f%d"}`, i), "x") }, want{}, 0},
		{"new pages", 0, 3, func(i int) callOutcome { return out("WebFetch", fmt.Sprintf(`{"url":"https://e/%d"}`, i), "x") }, want{}, 0},
		{"edits", 0, 3, func(i int) callOutcome { return out("EditTool", `{"file_path":"/a"}`, fmt.Sprint(i), "/a") }, want{}, 0},
		{"new test output", 0, 3, func(i int) callOutcome {
			return out("ExecuteCommand", `{"command":"go test ./..."}`, fmt.Sprintf("FAIL %d", i))
		}, want{}, 0},
		{"same test output", 0, 3, func(i int) callOutcome {
			return out("ExecuteCommand", fmt.Sprintf(`{"command":"go test ./... -run X%d"}`, i), "FAIL")
		}, want{messages.NoProgressStall, 3}, 4},
		{"greps without reading", 0, 3, func(i int) callOutcome {
			return out("Grep", fmt.Sprintf(`{"pattern":"p%d"}`, i), "none")
		}, want{messages.NoProgressStall, 3}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newRunawayWatch(tc.id, tc.win)
			for i := range 20 {
				np := w.see(observe(set, []callOutcome{tc.outcomes(i)}))
				if np == nil {
					continue
				}
				if tc.at == 0 || np.Kind != tc.want.kind || np.Calls != tc.want.calls || i+1 != tc.at {
					t.Fatalf("tripped at call %d with %+v, want %+v at %d", i+1, np, tc.want, tc.at)
				}
				return
			}
			if tc.at != 0 {
				t.Fatalf("never tripped, want %+v at %d", tc.want, tc.at)
			}
		})
	}
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// scriptedHooks answers with fixed verdicts and records the calls.
type scriptedHooks struct {
	pre, post tool.HookVerdict
	calls     []string
	postSaw   tool.Result
}

func (h *scriptedHooks) PreToolUse(_ context.Context, _ *tool.Env, info tool.Info, input json.RawMessage) tool.HookVerdict {
	h.calls = append(h.calls, "pre "+info.Name+" "+string(input))
	return h.pre
}

func (h *scriptedHooks) PostToolUse(_ context.Context, _ *tool.Env, info tool.Info, _ json.RawMessage, res tool.Result) tool.HookVerdict {
	h.calls = append(h.calls, "post "+info.Name)
	h.postSaw = res
	return h.post
}

func TestWithHooks(t *testing.T) {
	cases := []struct {
		name    string
		hooks   scriptedHooks
		tool    func(*int) tool.Tool
		want    tool.Result
		runs    int
		calls   []string
		notices []messages.Event
		goErr   bool
	}{
		{
			name:  "no objections",
			tool:  echoTool,
			want:  tool.Result{Output: "hi"},
			runs:  1,
			calls: []string{`pre Echo {"text":"hi"}`, "post Echo"},
		},
		{
			name:  "pre blocks",
			hooks: scriptedHooks{pre: tool.HookVerdict{Block: true, Message: "no writes on Fridays\n"}},
			tool:  echoTool,
			want:  tool.Result{Output: "Blocked by a PreToolUse hook: no writes on Fridays", IsError: true, Denied: true},
			calls: []string{`pre Echo {"text":"hi"}`},
		},
		{
			name:  "post adds context and objects",
			hooks: scriptedHooks{post: tool.HookVerdict{Block: true, Message: "lint failed", Context: "formatted 1 file"}},
			tool:  echoTool,
			want:  tool.Result{Output: "hi\n\n[PostToolUse hook]\nformatted 1 file\n\n[PostToolUse hook objected]\nlint failed", IsError: true},
			runs:  1,
			calls: []string{`pre Echo {"text":"hi"}`, "post Echo"},
		},
		{
			name:    "warnings are published",
			hooks:   scriptedHooks{pre: tool.HookVerdict{Warnings: []string{"hook a exited 1"}}, post: tool.HookVerdict{Warnings: []string{"hook b timed out"}}},
			tool:    echoTool,
			want:    tool.Result{Output: "hi"},
			runs:    1,
			calls:   []string{`pre Echo {"text":"hi"}`, "post Echo"},
			notices: []messages.Event{messages.Notice{Level: "warn", Text: "hook a exited 1"}, messages.Notice{Level: "warn", Text: "hook b timed out"}},
		},
		{
			name: "no post hook after a Go error",
			tool: func(runs *int) tool.Tool {
				return tool.New("Echo", tool.ClassRead, "d", func(context.Context, *tool.Env, echoIn) (tool.Result, error) {
					*runs++
					return tool.Result{}, errors.New("broken")
				})
			},
			runs:  1,
			goErr: true,
			calls: []string{`pre Echo {"text":"hi"}`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runs := 0
			h := c.hooks
			var notices []messages.Event
			env := &tool.Env{Publish: func(ev any) { notices = append(notices, ev.(messages.Event)) }}
			got, err := WithHooks(&h)(c.tool(&runs)).Run(t.Context(), env, json.RawMessage(`{"text":"hi"}`))
			if (err != nil) != c.goErr {
				t.Fatalf("err %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if runs != c.runs {
				t.Errorf("runs %d, want %d", runs, c.runs)
			}
			if diff := cmp.Diff(c.calls, h.calls); diff != "" {
				t.Errorf("hook calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.notices, notices); diff != "" {
				t.Errorf("notices (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithHooksSkipsPostForDenied(t *testing.T) {
	runs := 0
	h := &scriptedHooks{}
	tl := WithHooks(h)(WithPermission(&rulePermission{banned: "hi"})(echoTool(&runs)))
	got, err := tl.Run(t.Context(), &tool.Env{}, json.RawMessage(`{"text":"hi"}`))
	if err != nil || !got.Denied || runs != 0 {
		t.Fatalf("got %+v, %v, runs %d", got, err, runs)
	}
	if diff := cmp.Diff([]string{`pre Echo {"text":"hi"}`}, h.calls); diff != "" {
		t.Errorf("hook calls (-want +got):\n%s", diff)
	}
}

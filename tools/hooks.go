package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// WithHooks runs h's PreToolUse hooks before each call and its PostToolUse
// hooks after it. A blocking PreToolUse hook stops the call: the model gets
// an error Result (Denied set) carrying the hook's message. A blocking
// PostToolUse hook cannot undo the call; its message is appended to the
// output and the result marked as an error so the model acts on it.
// Context from hooks is appended to the output; warnings are published to
// env.Publish as messages.Notice. Post hooks do not run for calls that were
// denied or that failed with a Go error.
//
// Either order with WithPermission works: with hooks outside
// (Map(WithPermission(p), WithHooks(h))) a hook can refuse a call before the
// user is asked about it; with the permission outside, a denied call never
// reaches the hooks.
func WithHooks(h tool.HookRunner) func(tool.Tool) tool.Tool {
	if h == nil {
		panic("tools: WithHooks(nil)")
	}
	return func(t tool.Tool) tool.Tool {
		return Wrap(t, func(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
			info := t.Info()
			// A hook judges a ShellSession command where it will run.
			hctx := ctx
			if wd, ok := innermost(t).(tool.WorkDirer); ok && env != nil {
				if d := wd.WorkDir(env); d != "" {
					hctx = tool.WithWorkDir(ctx, d)
				}
			}
			pre := h.PreToolUse(hctx, env, info, input)
			warn(env, pre.Warnings)
			if pre.Block {
				msg := strings.TrimSpace(pre.Message)
				if msg == "" {
					msg = "no reason given"
				}
				return tool.Result{Output: "Blocked by a PreToolUse hook: " + msg, IsError: true, Denied: true}, nil
			}
			res, err := t.Run(ctx, env, input)
			if err != nil || res.Denied {
				return res, err
			}
			post := h.PostToolUse(hctx, env, info, input, res)
			warn(env, post.Warnings)
			if c := strings.TrimSpace(pre.Context); c != "" {
				res.Output = appendSection(res.Output, "PreToolUse hook", c)
			}
			if c := strings.TrimSpace(post.Context); c != "" {
				res.Output = appendSection(res.Output, "PostToolUse hook", c)
			}
			if post.Block {
				res.Output = appendSection(res.Output, "PostToolUse hook objected", strings.TrimSpace(post.Message))
				res.IsError = true
			}
			return res, nil
		})
	}
}

func appendSection(out, title, body string) string {
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + "\n[" + title + "]\n" + body
}

func warn(env *tool.Env, warnings []string) {
	if env == nil || env.Publish == nil {
		return
	}
	for _, w := range warnings {
		env.Publish(messages.Notice{Level: "warn", Text: w})
	}
}

package tools

import (
	"context"
	"encoding/json"
	"github.com/odin-code/odin/tools/tool"
)

// WithPermission runs p before every call of the tool. A denial becomes an
// error Result with Denied set and the denial's text as output, so the
// model can change course; any other error from p is returned as a Go
// error. p must not be nil.
func WithPermission(p tool.Permission) func(tool.Tool) tool.Tool {
	if p == nil {
		panic("tools: WithPermission(nil)")
	}
	return func(t tool.Tool) tool.Tool {
		return Wrap(t, func(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
			// A tool with a working directory of its own is checked
			// where its command runs, not in the project root.
			// Any other tool is checked in the root, whatever ctx carries.
			d := ""
			if wd, ok := innermost(t).(tool.WorkDirer); ok && env != nil {
				d = wd.WorkDir(env)
			}
			if d != "" || tool.WorkDir(ctx) != "" {
				ctx = tool.WithWorkDir(ctx, d)
			}
			if err := p.Authorize(ctx, env, t.Info(), input); err != nil {
				if tool.IsDenied(err) {
					return tool.Result{Output: err.Error(), IsError: true, Denied: true}, nil
				}
				return tool.Result{}, err
			}
			return t.Run(ctx, env, input)
		})
	}
}

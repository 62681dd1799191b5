package tools

import (
	"context"
	"encoding/json"
)

// WithPermission runs p before every call of the tool. A denial becomes an
// error Result with Denied set and the denial's text as output, so the
// model can change course; any other error from p is returned as a Go
// error. p must not be nil.
func WithPermission(p Permission) func(Tool) Tool {
	if p == nil {
		panic("tools: WithPermission(nil)")
	}
	return func(t Tool) Tool {
		return Wrap(t, func(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
			if err := p.Authorize(ctx, env, t.Info(), input); err != nil {
				if IsDenied(err) {
					return Result{Output: err.Error(), IsError: true, Denied: true}, nil
				}
				return Result{}, err
			}
			return t.Run(ctx, env, input)
		})
	}
}

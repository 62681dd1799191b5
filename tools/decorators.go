package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"
)

// wrapped lets a decorator replace Run while keeping Info.
type wrapped struct {
	Tool
	run func(ctx context.Context, env *Env, input json.RawMessage) (Result, error)
}

func (w wrapped) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	return w.run(ctx, env, input)
}

// Wrap returns t with its Run replaced by run; run may call t.Run.
func Wrap(t Tool, run func(ctx context.Context, env *Env, input json.RawMessage) (Result, error)) Tool {
	return wrapped{Tool: t, run: run}
}

// WithRecover turns a panic inside the tool into a Go error carrying the
// panic value and stack, so one broken tool cannot take an agent down.
func WithRecover(t Tool) Tool {
	return Wrap(t, func(ctx context.Context, env *Env, input json.RawMessage) (res Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("tools: %s panicked: %v\n%s", t.Info().Name, p, debug.Stack())
			}
		}()
		return t.Run(ctx, env, input)
	})
}

// WithTimeout bounds each call of t by d. A call that runs out of time
// returns an error Result saying so.
func WithTimeout(d time.Duration) func(Tool) Tool {
	return func(t Tool) Tool {
		return Wrap(t, func(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			res, err := t.Run(ctx, env, input)
			if ctx.Err() == context.DeadlineExceeded && (err != nil || res.IsError) {
				return Errorf("%s timed out after %s", t.Info().Name, d), nil
			}
			return res, err
		})
	}
}

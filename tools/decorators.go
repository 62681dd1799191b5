package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/odin-code/odin/tools/tool"
	"github.com/rs/zerolog"
)

// wrapped lets a decorator replace Run while keeping Info.
type wrapped struct {
	tool.Tool
	run func(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error)
}

func (w wrapped) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	return w.run(ctx, env, input)
}

// Wrap returns t with its Run replaced by run; run may call t.Run.
func Wrap(t tool.Tool, run func(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error)) tool.Tool {
	return wrapped{Tool: t, run: run}
}

// WithRecover turns a panic inside the tool — and inside whatever the
// tool wraps, such as WithPermission's check when WithRecover is applied
// last — into an error Result naming the tool, so one broken tool or one
// input that crashes the permission check fails that call alone, never the
// agent, the session or the process. The panic value and stack are logged
// at error level to the zerolog logger in ctx (zerolog.Ctx), never shown
// to the model.
func WithRecover(t tool.Tool) tool.Tool {
	return Wrap(t, func(ctx context.Context, env *tool.Env, input json.RawMessage) (res tool.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				res, err = PanicResult(ctx, t.Info().Name, p, debug.Stack()), nil
			}
		}()
		return t.Run(ctx, env, input)
	})
}

// PanicResult is the error Result for a call of the tool name that
// panicked with value p; it logs p and stack to the zerolog logger in ctx.
// Callers that run tools recover with it too, so a tool not wrapped with
// WithRecover fails the same way.
func PanicResult(ctx context.Context, name string, p any, stack []byte) tool.Result {
	zerolog.Ctx(ctx).Error().Str("tool", name).Str("panic", fmt.Sprint(p)).Str("stack", string(stack)).
		Msg("tools: a tool call panicked; it failed with an internal error")
	return tool.Result{IsError: true, Output: fmt.Sprintf(
		"%s failed with an internal error in Odin (panic: %v); the call was not completed. This is a bug in Odin, not in the input; try another way to do it.", name, p)}
}

// Unwrap returns the tool w decorates, so that a decorator further out can
// reach an optional interface of the tool inside (tool.WorkDirer).
func (w wrapped) Unwrap() tool.Tool { return w.Tool }

// innermost unwraps t's decorators down to the tool they decorate.
func innermost(t tool.Tool) tool.Tool {
	for {
		u, ok := t.(interface{ Unwrap() tool.Tool })
		if !ok {
			return t
		}
		t = u.Unwrap()
	}
}

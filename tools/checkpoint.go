package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// WithCommandCheckpoint brackets each call of a command tool (class
// execute: ExecuteCommand, ShellSession, Python) with env.BeforeCommand,
// so that undo restores what the command changed in the workspace as it
// restores the write tools' changes. Other tools are returned as they
// are. A call that may not write (ask and plan mode, an agent whose
// commands run with the project read-only) is not bracketed: the sandbox
// keeps it from changing anything.
//
// Put it inside WithPermission, so a denied call costs no snapshot, and
// outside WithHooks, so what a hook of the call changes is recorded too.
// A snapshot that fails stops the call (a Go error, as a failed
// checkpoint of a write tool does): running a command without a way back
// is not an option. A failure to record afterwards cannot undo the
// command; the model and the user are told undo will not cover it.
func WithCommandCheckpoint(t tool.Tool) tool.Tool {
	if t.Info().Class != tool.ClassExecute {
		return t
	}
	name := t.Info().Name
	return Wrap(t, func(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
		if env == nil || env.BeforeCommand == nil || env.ReadOnlyCommands || !writeMode(env.Mode) {
			return t.Run(ctx, env, input)
		}
		after, err := env.BeforeCommand(ctx, env.Root)
		if err != nil {
			return tool.Result{}, fmt.Errorf("tools: %s: snapshot the workspace before the command: %w", name, err)
		}
		res, err := t.Run(ctx, env, input)
		if after == nil {
			return res, err
		}
		// The command ran: what it changed is recorded even when the call
		// was cancelled. Its files are the call's, as a write tool's are:
		// the agent's report and the turn's change list name them.
		changed, aerr := after(context.WithoutCancel(ctx))
		for _, p := range changed {
			if !slices.Contains(res.Files, p) {
				res.Files = append(res.Files, p)
			}
		}
		if aerr != nil {
			note := "odin: could not record what this command changed, so undo will not restore it: " + aerr.Error()
			if env.Publish != nil {
				env.Publish(messages.Notice{Level: "warn", Text: note})
			}
			if err == nil {
				res.Output = appendSection(res.Output, "checkpoint", note)
			}
		}
		return res, err
	})
}

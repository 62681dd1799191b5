package tool

import (
	"context"

	"github.com/odin-code/odin/messages"
)

// CallRef names the model's tool call a tool runs for: the agent that
// made it and the call's ID, as messages.ToolStarted carries them. Front
// ends that show a call (ACP's tool call cards) tie what the tool does
// while it runs — an approval asked, a file read through the editor — to
// that call.
type CallRef struct {
	Origin messages.Origin
	ID     string
}

type callKey struct{}

// WithCall returns ctx carrying ref; the agent loop sets it for each call
// it runs.
func WithCall(ctx context.Context, ref CallRef) context.Context {
	return context.WithValue(ctx, callKey{}, ref)
}

// CallOf returns the call ctx runs for, if any.
func CallOf(ctx context.Context) (CallRef, bool) {
	ref, ok := ctx.Value(callKey{}).(CallRef)
	return ref, ok && ref.ID != ""
}

package actors

import (
	"context"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// SessionHooks runs the user's hooks on session events (UserPromptSubmit,
// SubagentStart, SubagentStop, Stop, PreCompact). *policy.Hooks is one.
type SessionHooks interface {
	Has(event string) bool
	Run(ctx context.Context, in policy.HookInput) policy.HookResult
}

// hookDone carries a hook's result back to the actor that ran it.
type hookDone struct {
	id     int
	result policy.HookResult
}

// maxHookBlocks bounds how often Stop and SubagentStop hooks may keep an
// agent going, so a hook that always blocks cannot loop forever.
const maxHookBlocks = 3

// hookRunner runs hooks off the mailbox and calls the continuation inside
// Receive when they finish. It belongs to one actor.
type hookRunner struct {
	deps    *Deps
	session string
	seq     int
	pending map[int]func(actor.Context, policy.HookResult)
}

// run starts the hooks of in.Event, or calls then at once (with an empty
// result) when none is configured, so events without hooks cost nothing.
func (h *hookRunner) run(c actor.Context, ctx context.Context, in policy.HookInput, then func(actor.Context, policy.HookResult)) {
	hooks := h.deps.Hooks
	if hooks == nil || !hooks.Has(in.Event) {
		then(c, policy.HookResult{})
		return
	}
	if h.pending == nil {
		h.pending = map[int]func(actor.Context, policy.HookResult){}
	}
	h.seq++
	id := h.seq
	h.pending[id] = then
	in.SessionID, in.Cwd = h.session, h.deps.Root
	runAsync(c, ctx, func(ctx context.Context) any {
		return &hookDone{id: id, result: hooks.Run(context.WithoutCancel(ctx), in)}
	})
}

// done dispatches a finished hook to its continuation, after showing the
// user the hook's warnings.
func (h *hookRunner) done(c actor.Context, msg *hookDone) {
	then, ok := h.pending[msg.id]
	if !ok {
		return
	}
	delete(h.pending, msg.id)
	for _, w := range msg.result.Warnings {
		h.deps.Bus.Publish(messages.Notice{Level: "warn", Text: "hook: " + w})
	}
	then(c, msg.result)
}

// withContext appends a hook's context output to text.
func withContext(text, hookContext string) string {
	if strings.TrimSpace(hookContext) == "" {
		return text
	}
	return text + "\n\n<hook_context>\n" + strings.TrimSpace(hookContext) + "\n</hook_context>"
}

package actors

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/untrusted"
	"github.com/odin-code/odin/tools"
)

// The first turn of a new session starts with a compact repo map, so the
// Orchestrator's model knows the shape of the code before it plans. It
// may delay the first request by at most firstMapTimeout: a tree too big
// to map that fast goes without (what was parsed is cached, so a later
// RepoMap call goes on from there).
const (
	firstMapBudget  = 512
	firstMapTimeout = 3 * time.Second
)

// firstTurnMap hands then the repo map for the first turn of a new session
// (no history yet), or "" on any other turn, when the session has no
// RepoMap tool, or when the map fails or takes too long: the map is a
// help, never a reason for a turn to fail. The map is built off the
// mailbox with the session's own RepoMap tool (guard and hooks included)
// and continues inside Receive only if the turn is still live.
func (o *Orchestrator) firstTurnMap(c actor.Context, t *turnState, then func(actor.Context, string)) {
	rm, ok := o.deps.Tools.Get(tools.NameRepoMap)
	if len(o.history) > 0 || !ok {
		then(c, "")
		return
	}
	env := o.env(t)
	offMailbox(c, t.ctx, t.id, nil, func(ctx context.Context) string {
		ctx, cancel := context.WithTimeout(ctx, firstMapTimeout)
		defer cancel()
		in, _ := json.Marshal(tools.RepoMapInput{Budget: firstMapBudget})
		res, err := rm.Run(ctx, env, in)
		if err != nil || res.IsError || strings.HasPrefix(res.Output, "No definitions found") {
			return ""
		}
		return res.Output
	}, then)
}

// withRepoMap appends the map to the first user message. It goes into the
// history, not the system prompt, so every later request of the session
// shares the same prefix (the provider's prompt cache keeps working) and a
// resumed session sees the map it started with. The map is text from the
// repository's files, so it is fenced as untrusted data; the Orchestrator's
// system message states the fencing rule, so a line names the fence.
func withRepoMap(text, repoMap string) string {
	if strings.TrimSpace(repoMap) == "" {
		return text
	}
	f := untrusted.NewFence(untrusted.Data, "from the project's source files")
	// The map's own first line says how it is ordered; RepoMap maps more.
	return text + "\n\n<repo_map>\nA map of the project's code (RepoMap maps more, or a subdirectory). " +
		f.Note() + "\n" + f.Wrap(strings.TrimSpace(repoMap)) + "\n</repo_map>"
}

package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// CompactRequest asks the Orchestrator to compact its history now (the
// /compact command). It answers with *CompactResult once done; inputs that
// arrive meanwhile are queued.
type CompactRequest struct{}

// CompactResult is the outcome of a compaction.
type CompactResult struct {
	Compacted    messages.Compacted
	Err          string
	Skipped      string // why nothing was done
	SummaryChars int
}

// compactDone carries the summary back to the Orchestrator.
type compactDone struct {
	id       int // the compaction it answers
	cut      int
	summary  string
	usage    messages.Usage // of every request made, also when one failed
	requests int
	model    string
	err      error
}

// compactionFocus steers the summary of compacted history towards what
// the session needs to go on without it.
const compactionFocus = "a coding session that must continue from this summary alone: the user's goals and explicit requests; " +
	"what was done (files read, changed or created, with absolute paths) and why; decisions and their reasons; facts learned about the code; " +
	"what remains to do, open questions and unresolved errors; the current todo list"

// summaryPrefix starts the message that replaces compacted history.
const summaryPrefix = "This session was compacted. Summary of the conversation so far:\n\n"

// compaction is the compaction in progress: the data of the compacting
// behaviour.
type compaction struct {
	id      int
	trigger string
	before  int64
	reply   *actor.PID // manual requester
	then    func(actor.Context, *CompactResult)
	cancel  context.CancelFunc
	// frontier is written before the history is summarised and follows
	// the summary verbatim.
	frontier Frontier
}

// estimate is the prompt size of the next request: the provider's count
// for the last request plus an estimate of what was added since.
func (o *Orchestrator) estimate(extra int64) int64 {
	if o.lastPrompt > 0 && o.lastLen <= len(o.history) {
		return o.lastPrompt + llm.EstimateMessages(o.history[o.lastLen:])
	}
	return llm.EstimateMessages(o.history) + extra
}

// compactCut is where kept history starts: the last keep messages survive,
// moved back so that no tool result is separated from its call.
func compactCut(history []llm.Message, keep int) int {
	cut := len(history) - keep
	for cut > 0 && history[cut].Role == llm.RoleTool {
		cut--
	}
	if cut <= 0 {
		return 0
	}
	return cut
}

// fitCut moves cut later while the messages kept verbatim, history[cut:],
// are over limit tokens (a huge tool result among the last few), so that
// the request after compaction fits: never past the last user message,
// the input being answered, and never onto a tool result.
func fitCut(history []llm.Message, cut int, limit int64) int {
	last := -1
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == llm.RoleUser {
			last = i
			break
		}
	}
	size := llm.EstimateMessages(history[cut:])
	for cut < last && size > limit {
		size -= llm.EstimateMessages(history[cut : cut+1])
		cut++
		for cut < last && history[cut].Role == llm.RoleTool {
			size -= llm.EstimateMessages(history[cut : cut+1])
			cut++
		}
	}
	return cut
}

// transcript renders messages as text for the summariser.
func transcript(msgs []llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleTool:
			fmt.Fprintf(&b, "[tool result of %s]\n%s\n\n", m.Name, shorten(m.Content, 3000))
		case llm.RoleAssistant:
			if m.Content != "" {
				fmt.Fprintf(&b, "[assistant]\n%s\n\n", m.Content)
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "[assistant calls %s] %s\n\n", c.Name, shorten(c.Arguments, 1500))
			}
		default:
			fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, m.Content)
		}
	}
	return b.String()
}

// startCompaction summarises the older part of the history with the small
// model, unless a PreCompact hook blocks it. then runs afterwards either
// way, with the outcome.
func (o *Orchestrator) startCompaction(c actor.Context, ctx context.Context, trigger string, reply *actor.PID, then func(actor.Context, *CompactResult)) {
	keep := o.deps.Config.Context.KeepRecent
	if keep <= 0 {
		keep = 6
	}
	cut := compactCut(o.history, keep)
	if t := o.turn; t != nil && t.model.ContextWindow > 0 && o.deps.Config.Context.CompactAt > 0 {
		cut = fitCut(o.history, cut, int64(float64(t.model.ContextWindow)*o.deps.Config.Context.CompactAt/2))
	}
	if cut < 2 {
		o.endCompaction(c, &CompactResult{Skipped: "the history is too short"}, reply, then)
		return
	}
	o.compactSeq++
	ctx, cancel := context.WithCancel(ctx)
	cp := &compaction{id: o.compactSeq, trigger: trigger, before: o.estimate(0), reply: reply, then: then, cancel: cancel,
		frontier: o.frontier()}
	o.compacting = cp
	o.behavior.BecomeStacked(o.compactingState)
	bus := o.deps.Bus
	o.hooks.run(c, ctx, policy.HookInput{Event: policy.PreCompact, Agent: "orchestrator", Trigger: trigger}, func(c actor.Context, hr policy.HookResult) {
		if o.compacting != cp {
			return // aborted meanwhile
		}
		if hr.Blocked {
			o.endCompaction(c, &CompactResult{Skipped: "a PreCompact hook blocked compaction: " + strings.TrimSpace(hr.Feedback)}, cp.reply, cp.then)
			return
		}
		m, err := o.deps.Models.Model("small")
		if err != nil {
			o.onCompactDone(c, &compactDone{id: cp.id, err: err})
			return
		}
		// The summariser reads a copy: the live history may grow while it
		// works (a report arriving mid-turn), and only [:cut] is replaced.
		j, session, now := o.j, o.session, o.deps.now
		sm := &summariser{model: m, budget: newSummaryBudget(m.ContextWindow, m.MaxOutput), hist: slices.Clone(o.history[:cut]),
			notice: func(text string) { bus.Publish(messages.Notice{Level: "info", Text: text}) },
			spent:  func(u messages.Usage) { j.usage(session, "compaction", m.ID, u, now()) }}
		id := cp.id
		runAsync(c, ctx, func(ctx context.Context) any {
			res, err := sm.run(ctx)
			return &compactDone{id: id, cut: cut, summary: res.summary, usage: res.usage, requests: res.requests, model: m.ID, err: err}
		})
	})
}

// compactingState is the behaviour while a compaction runs, stacked over
// idle (/compact) or busy (auto-compaction inside a turn). It handles
// Cancel (aborting the compaction, and the turn if there is one), queue
// edits and new inputs itself; other messages of a turn go to busy.
func (o *Orchestrator) compactingState(c actor.Context) {
	switch msg := c.Message().(type) {
	case *compactDone:
		o.onCompactDone(c, msg)
	case *CompactRequest:
		c.Respond(&CompactResult{Skipped: "a compaction is already running"})
	case *messages.Cancel:
		o.abortCompaction(c, msg.Reason)
	case *messages.UserMessage:
		o.enqueue(*msg)
	case *messages.QueueRequest:
		c.Respond(o.queueState())
	case *messages.RemoveQueued:
		o.removeQueued(msg.ID)
		c.Respond(o.queueState())
	case *hookDone:
		o.hooks.done(c, msg)
	default:
		if o.turn != nil {
			o.busy(c)
			return
		}
		o.idle(c)
	}
}

// abortCompaction ends the running compaction on Cancel: inside a turn the
// turn is cancelled (its context ends the summary call); a manual one
// answers its requester and lets queued inputs run.
func (o *Orchestrator) abortCompaction(c actor.Context, reason string) {
	cp := o.compacting
	if cp == nil {
		return
	}
	if o.turn != nil {
		o.cancelTurn(c, reason)
		return
	}
	cp.cancel()
	o.endCompaction(c, &CompactResult{Err: "compaction cancelled"}, cp.reply, cp.then)
}

func (o *Orchestrator) onCompactDone(c actor.Context, msg *compactDone) {
	cp := o.compacting
	if cp == nil || cp.id != msg.id {
		return // a late result of an aborted compaction
	}
	// Spent whether or not the compaction succeeded (the summariser has
	// recorded it in the store request by request).
	if msg.requests > 0 && o.turn != nil {
		o.addUsage("compaction", msg.model, msg.usage)
	}
	if msg.err != nil || strings.TrimSpace(msg.summary) == "" {
		why := "the summary was empty"
		if msg.err != nil {
			why = msg.err.Error()
		}
		if !errors.Is(msg.err, context.Canceled) {
			o.deps.Bus.Publish(messages.Notice{Level: "warn", Text: "compaction failed (the history is kept as it was): " + why})
		}
		o.endCompaction(c, &CompactResult{Err: why}, cp.reply, cp.then)
		return
	}
	kept := append([]llm.Message(nil), o.history[msg.cut:]...)
	summary := llm.Message{Role: llm.RoleUser, Content: withFrontier(summaryPrefix+strings.TrimSpace(msg.summary), cp.frontier)}
	o.history = append([]llm.Message{summary}, kept...)
	o.lastPrompt, o.lastLen = 0, 0
	now := o.deps.now()
	o.j.do(func(ctx context.Context, st store.Store) error {
		write := func(ctx context.Context) error {
			if _, err := st.AppendSummary(ctx, ToStoreMessage(o.session, summary, msg.model, "", now)); err != nil {
				return err
			}
			// The kept messages follow the summary again, so that the
			// stored history (which starts at the summary) matches the
			// live one.
			for _, m := range kept {
				if _, err := st.AppendMessage(ctx, ToStoreMessage(o.session, m, "", "", now)); err != nil {
					return err
				}
			}
			return nil
		}
		// All or nothing: a summary stored without the kept messages
		// would lose them from the resumable history. The messages it
		// replaces stay in the store either way (AllMessages).
		return store.InBatch(ctx, st, write)
	})
	ev := messages.Compacted{Messages: msg.cut, TokensBefore: cp.before, TokensAfter: o.estimate(0), Requests: msg.requests}
	o.deps.Bus.Publish(ev)
	o.endCompaction(c, &CompactResult{Compacted: ev, SummaryChars: len(msg.summary)}, cp.reply, cp.then)
}

// endCompaction leaves the compacting behaviour (when one was entered),
// answers a manual requester and continues with then.
func (o *Orchestrator) endCompaction(c actor.Context, res *CompactResult, reply *actor.PID, then func(actor.Context, *CompactResult)) {
	if cp := o.compacting; cp != nil {
		cp.cancel()
		o.compacting = nil
		o.behavior.UnbecomeStacked()
	}
	if reply != nil {
		c.Send(reply, res)
	}
	if then != nil {
		then(c, res)
	}
}

// callAfterCompaction continues turn t after the compaction its next
// request needed. When the compaction changed nothing (it failed, was
// blocked or found too little to summarise) and the request would still
// be over the model's whole window, the turn fails with the reason rather
// than send a request the provider can only refuse.
func (o *Orchestrator) callAfterCompaction(c actor.Context, t *turnState, res *CompactResult, system string, defs []llm.ToolDef) {
	window := int64(t.model.ContextWindow)
	if res.Compacted.Messages == 0 && window > 0 {
		size := llm.EstimateMessages(o.history) + llm.EstimateTokens(system) + llm.EstimateTools(defs)
		if size > window {
			why := res.Err
			if why == "" {
				why = res.Skipped
			}
			o.finishTurn(c, messages.TurnFailed, fmt.Sprintf("the conversation (about %d tokens) does not fit the model's context window of %d tokens, and compacting it failed: %s (try /compact again, or start a new session)", size, window, why))
			return
		}
	}
	o.callModel(c)
}

// overflowProblem is why a turn whose request the provider refused as too
// long ends when compacting did not shrink the history: a compaction that
// failed says so (trying again may help), else nothing was left to compact.
func overflowProblem(le *llm.Error, res *CompactResult) string {
	if res != nil && res.Err != "" {
		return "the request does not fit the model's context window (" + le.Message + ") and compacting the history failed: " + res.Err + " (try /compact, or start a new session)"
	}
	return "the request does not fit the model's context window and there is nothing left to compact: " + le.Message + " (shorten the message, or start a new session)"
}

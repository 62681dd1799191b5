package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
)

// Delegating while the Orchestrator's reply streams (issue 37).
//
// A fan-out's reply carries hundreds of agent calls, and decoding it whole
// before delegating any put the stream's length on every specialist's
// critical path. The model client announces each call whose arguments are
// complete while the reply still streams (llm.EventToolCallDone); the
// Orchestrator then starts that call's specialist at once, when doing so
// early cannot be told apart from doing it at the reply's end:
//
//   - only delegations to read-only agents with the brief context start
//     early: they change nothing in the project, so a reply that fails
//     afterwards leaves nothing behind but their spend; a forked or scoped
//     context is built from the history, which holds the reply only once
//     it has ended; resumes and background runs, which depend on and
//     change the registry of runs, wait for the end as well;
//   - the call goes through the same validation and SubagentStart hooks
//     as at the end; a call they refuse never starts; a call the
//     validation refuses is left to the reply's end, which answers it as
//     before; once a delegation is left to the end, so is every later
//     one, so that delegations start (and their hooks run) in the reply's
//     call order, as they did;
//   - the reply's end is authoritative: a call started early counts only
//     if the final reply has it with the same ID, name and arguments;
//     otherwise (a retry of the model call, a failed call, a provider
//     that added to a call after announcing it) its run is stopped and
//     its result, if any, dropped, so no task keeps running for a call the
//     reply does not make, and two runs of one call never overlap;
//   - the history and the store see nothing early: the reply is stored
//     as it streams (streamingReply) and the results follow it once it
//     has ended (maybeContinue), as before; the run registry and the
//     child sessions record the runs when they start.
//
// Plain tools are unchanged: they run, behind their permission checks and
// PreToolUse hooks, once the reply has ended.

// callStreamed carries an agent call whose arguments the stream has
// delivered whole, while reply still streams.
type callStreamed struct {
	reply *streamingReply
	call  llm.ToolCall
}

// streamRetried says that the model call of reply failed and starts over:
// what its failed attempt streamed is void.
type streamRetried struct{ reply *streamingReply }

// earlyCall is an agent call started before its reply ended.
type earlyCall struct {
	call llm.ToolCall
	run  *taskRun // once its SubagentStart hooks let it start
	// claimed: the reply ended with this call; dropped: it did not, and
	// the run was stopped.
	claimed, dropped bool
}

// streamTap is what a model call of turn t taps its stream with: the
// reply's persistence, and for a turn that may delegate, the calls
// announced done and the retries, sent to the actor in stream order
// (ahead of the call's modelDone, which the same goroutine sends last).
func (o *Orchestrator) streamTap(c actor.Context, t *turnState, reply *streamingReply) func(llm.Event) {
	if len(t.agents) == 0 {
		return reply.event
	}
	system, self := c.ActorSystem(), c.Self()
	sent := false // only the stream's goroutine reads and writes it
	return func(ev llm.Event) {
		reply.event(ev)
		switch ev.Kind {
		case llm.EventToolCallDone:
			if ev.ToolCall != nil && ev.ToolCall.Name == AgentToolName {
				sent = true
				system.Root.Send(self, &callStreamed{reply: reply, call: *ev.ToolCall})
			}
		case llm.EventRetry:
			if sent {
				sent = false
				system.Root.Send(self, &streamRetried{reply: reply})
			}
		}
	}
}

// onCallStreamed starts the specialist of an agent call the stream has
// delivered, when it may start early (see above); any other call waits
// for the reply's end.
func (o *Orchestrator) onCallStreamed(c actor.Context, msg *callStreamed) {
	t := o.turn
	if t == nil || t.finished || t.reply != msg.reply || len(t.agents) == 0 {
		return // a late announcement of a reply that has ended
	}
	if t.halted == msg.reply {
		return
	}
	call := msg.call
	in, def, problem := parseDelegation(o.agentTool, t.agents, call.Arguments)
	if _, dup := t.early[call.ID]; dup || problem != "" || !o.startsEarly(t, in, def) {
		// Left to the reply's end (a repeated ID is told apart there),
		// and so is every later call: delegations start, and their hooks
		// run, in the reply's call order.
		t.halted = msg.reply
		return
	}
	if t.early == nil {
		t.early = map[string]*earlyCall{}
	}
	e := &earlyCall{call: call}
	t.early[call.ID] = e
	o.startDelegate(c, t, call, def, in, e)
}

// startsEarly reports whether a valid delegation may start before its
// reply has ended.
func (o *Orchestrator) startsEarly(t *turnState, in AgentInput, def *AgentDefinition) bool {
	switch {
	case in.Resume != "", in.Background, in.Isolation == string(messages.IsolationWorktree), def.Isolation == messages.IsolationWorktree:
		return false
	}
	switch messages.ContextMode(in.Context) {
	case "", messages.ContextBrief:
	default:
		return false
	}
	ro, ok := t.readOnly[def.Name]
	if !ok {
		// Filtering the agent's tools costs more than the rest of the
		// check: once per agent and turn.
		ro = ReadOnlyAgent(o.deps.Tools, def)
		if t.readOnly == nil {
			t.readOnly = map[string]bool{}
		}
		t.readOnly[def.Name] = ro
	}
	return ro
}

// onStreamRetried voids the calls the failed attempt started.
func (o *Orchestrator) onStreamRetried(c actor.Context, msg *streamRetried) {
	t := o.turn
	if t == nil || t.finished || t.reply != msg.reply {
		return
	}
	o.dropEarly(c, t, nil, "stopped: the Orchestrator's model call was retried, and the call with it")
	t.halted = nil
}

// claimEarly matches the calls of the ended reply with those started
// early: claimed[i] is set when calls[i] was started with the same ID,
// name and arguments (and is not to be delegated again). Every other call
// started early is dropped first, so that its late result cannot answer a
// call of the reply.
func (o *Orchestrator) claimEarly(c actor.Context, t *turnState, calls []llm.ToolCall) (claimed []bool) {
	if len(t.early) == 0 {
		return nil
	}
	claimed = make([]bool, len(calls))
	for i, call := range calls {
		e := t.early[call.ID]
		if e == nil || e.claimed || call.Name != e.call.Name || call.Arguments != e.call.Arguments {
			continue
		}
		e.claimed, claimed[i] = true, true
	}
	o.dropEarly(c, t, func(e *earlyCall) bool { return e.claimed }, "stopped: the Orchestrator's reply did not make the call as it streamed")
	return claimed
}

// dropEarly stops the runs of the calls started early (except those keep
// says to keep) and forgets their results; t.early is empty afterwards.
func (o *Orchestrator) dropEarly(c actor.Context, t *turnState, keep func(*earlyCall) bool, why string) {
	for id, e := range t.early {
		if keep != nil && keep(e) {
			continue
		}
		e.dropped = true
		if e.run != nil && !e.run.reported {
			// Its spend so far is lost with it.
			t.usage.CostUnknown = true
			o.abandon(c, e.run, why)
		}
		delete(t.results, id)
		delete(t.marks, id)
	}
	t.early = nil
}

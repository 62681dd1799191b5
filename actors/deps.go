package actors

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/worktree"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// Model is a resolved model: the client that serves it and what Odin knows
// about it.
type Model struct {
	Client        llm.Client
	ID            string
	ContextWindow int
	MaxOutput     int
	Price         config.Price
	// PriceUnknown marks a model neither odin.yaml nor the catalogue
	// prices: its usage is reported as of unknown cost, never as $0.
	PriceUnknown bool
	// NoImages marks a model that takes no images (the catalogue or
	// model_info.<id>.images says so): images reach it as labels.
	NoImages bool
}

// Cost prices usage u with the model's price list.
func (m Model) Cost(u llm.Usage) float64 {
	cached := min(u.CachedTokens, u.PromptTokens)
	c := float64(u.PromptTokens-cached)*m.Price.Input +
		float64(cached)*m.Price.CachedInput +
		float64(u.CompletionTokens)*m.Price.Output
	return math.Round(c/1e6*1e8) / 1e8
}

// Usage converts an llm.Usage to the message form, with its cost.
func (m Model) Usage(u llm.Usage, reported bool) messages.Usage {
	return messages.Usage{
		PromptTokens:     u.PromptTokens,
		CompletionTokens: u.CompletionTokens,
		CachedTokens:     u.CachedTokens,
		ReasoningTokens:  u.ReasoningTokens,
		TotalTokens:      u.TotalTokens,
		Cost:             m.Cost(u),
		Estimated:        !reported,
		CostUnknown:      m.PriceUnknown,
	}
}

// UsageOf is Usage of r's usage with r's token ledger.
func (m Model) UsageOf(r *llm.Response) messages.Usage {
	u := m.Usage(r.Usage, r.UsageReported)
	for i, p := range r.Parts {
		if i < len(u.Parts) {
			u.Parts[i] = messages.PartTokens{Part: p.Part, Tokens: p.Tokens, Cached: p.Cached}
		}
	}
	return u
}

// ModelSource resolves a model by role ("main", "small") or explicit id.
type ModelSource interface {
	Model(name string) (Model, error)
}

// ModelFunc adapts a function to ModelSource.
type ModelFunc func(name string) (Model, error)

// Model calls f.
func (f ModelFunc) Model(name string) (Model, error) { return f(name) }

// ChangeTracker snapshots files before they are first written in a turn's
// change set and renders what changed. Implementations are safe for
// concurrent use (specialists write in parallel).
type ChangeTracker interface {
	// BeforeWrite is called with the resolved path before a tool changes it.
	BeforeWrite(path string) error
	// Changed lists the files written so far (absolute, in first-write order).
	Changed() []string
	// Diff renders the unified diff of the given files against their
	// snapshots, paths relative to the project root.
	Diff(paths []string) string
	// DiffSince renders the diff of the given files from the contents in
	// since (absent: from their snapshots; nil: not existing) to now, and
	// returns their contents now.
	DiffSince(paths []string, since map[string][]byte) (string, map[string][]byte)
	// Snapshot returns a file's content before the change set first wrote
	// it; existed is false for a file the change set created; ok is false
	// for a file not in the change set.
	Snapshot(path string) (content []byte, existed, ok bool)
	// FileChanges describes the given files for a CodeResult.
	FileChanges(paths []string) (modified, created []messages.FileChange)
}

// CommandTracker is a ChangeTracker that also records what commands
// change in the workspace (tool.Env.BeforeCommand).
type CommandTracker interface {
	BeforeCommand(ctx context.Context, root string) (after func(context.Context) ([]string, error), err error)
}

// beforeCommand is t's BeforeCommand, nil when t records no commands.
func beforeCommand(t ChangeTracker) func(context.Context, string) (func(context.Context) ([]string, error), error) {
	if ct, ok := t.(CommandTracker); ok {
		return ct.BeforeCommand
	}
	return nil
}

// ChangeSets starts a change set per turn. Begin is called when a turn
// starts; Commit when it ends (the set then becomes the checkpoint that
// odin undo restores).
type ChangeSets interface {
	Begin(ctx context.Context, sessionID, label string) ChangeTracker
	Commit(ctx context.Context, t ChangeTracker) error
}

// Deps is everything the actors need from the outside world. The caller
// (cmd, tests) builds it; actors never read the environment themselves.
type Deps struct {
	// Root is the project root: absolute and symlink-resolved.
	Root string
	// Editor, when set, is the editor the session runs in (odin acp with
	// a client offering fs methods): every agent's file tools read and
	// write through its buffers.
	Editor tool.Editor
	// Config is the loaded configuration.
	Config *config.Config
	// Models resolves models for the Orchestrator and specialists.
	Models ModelSource
	// Tools are the built-in tools, already decorated (recover, permission,
	// hooks). Agents receive filtered subsets.
	Tools tools.Set
	// MCP returns the session's MCP tools as they stand now, decorated like
	// Tools; nil means none. It must not block: a turn and a task take it
	// when they start, so a changed tool list is seen by the next one.
	MCP func() []tool.Tool
	// EndRun, when set, is called with a specialist's task ID (its tools'
	// Env.AgentID) once the specialist has stopped, in a goroutine of its
	// own: per-run resources such as WebBrowser's browser go with the run.
	EndRun func(agentID string)
	// Roster holds the specialists.
	Roster *Roster
	// Bus receives every event of the session.
	Bus *events.Bus
	// Guard returns the path guard for an agent (write scopes differ).
	Guard func(agent, taskID string) tool.PathGuard
	// DenyRead is the read deny list every agent's file tools honour; nil
	// denies nothing.
	DenyRead tool.ReadDeny
	// Small is the small model for tools that summarise; may be nil.
	Small tool.SmallModel
	// Instructions are the project's custom instructions (ODIN.md), given to
	// the Orchestrator and specialists (except Init).
	Instructions string
	// AppendSystem is appended to the Orchestrator's system prompt
	// (--append-system-prompt); the specialists' prompts are their own.
	AppendSystem string
	// Changes provides per-turn change sets; nil disables checkpoints and
	// diffs.
	Changes ChangeSets
	// Checks runs the quality-gate checks (QA commands); nil fails every
	// gate that requires QA ("no check runner is available").
	Checks CheckRunner
	// Coverage measures the changed packages' coverage before and after
	// for QA; nil skips it.
	Coverage CoverageMeter
	// Lint formats and lints the files the Code specialist changed before
	// its report; nil skips the step.
	Lint Linter
	// Hooks runs the user's hooks on session events; nil runs none.
	Hooks SessionHooks
	// Approver asks the user whether a paused runaway specialist may go
	// on; nil (headless) stops it instead.
	Approver policy.Approver
	// Store persists sessions as they happen; nil keeps them in memory.
	// A front end hands the session's claim (store.Fenced), so that every
	// write goes through it: once another process claims the session, a
	// write fails with store.ErrFenced and the session stops.
	Store store.Store
	// Worktrees creates the worktrees of isolated specialists and applies
	// their patches; nil makes isolation: worktree fail with a clear error.
	Worktrees *worktree.Manager
	// Locks serializes writes to one file across the session's agents;
	// NewSession provides it when nil.
	Locks *tool.PathLocks
	// Log is Odin's log.
	Log zerolog.Logger
	// Now and NewID are injected for deterministic tests.
	Now   func() time.Time
	NewID func() string
	// OS is the platform string shown in prompts.
	OS string
	// Remote places the tasks of agents with placement remote or any on
	// other nodes of a cluster; nil runs them all here.
	Remote RemoteSpecialists
}

// allTools are the built-in tools plus the MCP tools of the moment.
func (d *Deps) allTools() tools.Set {
	if d.MCP == nil {
		return d.Tools
	}
	return d.Tools.With(d.MCP()...)
}

func (d *Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Deps) validate() error {
	switch {
	case d.Root == "":
		return fmt.Errorf("actors: Deps.Root is required")
	case d.Config == nil:
		return fmt.Errorf("actors: Deps.Config is required")
	case d.Models == nil:
		return fmt.Errorf("actors: Deps.Models is required")
	case d.Roster == nil:
		return fmt.Errorf("actors: Deps.Roster is required")
	case d.Bus == nil:
		return fmt.Errorf("actors: Deps.Bus is required")
	case d.Guard == nil:
		return fmt.Errorf("actors: Deps.Guard is required")
	case d.NewID == nil:
		return fmt.Errorf("actors: Deps.NewID is required")
	}
	return nil
}

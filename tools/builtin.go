package tools

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/internal/repomap"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/tools/tool"
)

// Names of the built-in tools, as the seed spells them. Policies, rosters
// and hooks refer to tools by these names.
const (
	NameLS                = "LS"
	NameGlob              = "Glob"
	NameGrep              = "Grep"
	NameTree              = "Tree"
	NameReadFile          = "ReadFile"
	NameWriteFile         = "WriteFile"
	NameEditTool          = "EditTool"
	NameMultiEditTool     = "MultiEditTool"
	NameTodoWrite         = "TodoWrite"
	NameExecuteCommand    = "ExecuteCommand"
	NameGitDiff           = "GitDiff"
	NameContextSummarizer = "ContextSummarizer"
	NameRepoMap           = "RepoMap"
	NameInitTool          = "InitTool"
	NameShellSession      = "ShellSession"
	NamePython            = "Python"
)

// BuiltinOptions configure the built-in tools.
type BuiltinOptions struct {
	// ExecuteCommand sets the command timeouts and output cap.
	ExecuteCommand ExecuteCommandOptions
	// Fetcher is WebFetch's HTTP client and cache; WebFetch is left out
	// when it is nil.
	Fetcher *web.Fetcher
	// Searcher is WebSearch's backend. Without one WebSearch is still
	// listed and answers that no search backend is configured.
	Searcher web.Searcher
	// RepoMaps holds RepoMap's parsed trees and their cache; nil keeps
	// them in memory for the tool's lifetime.
	RepoMaps *repomap.Pool
	// Browsers are WebBrowser's browsers, one per agent run; WebBrowser is
	// left out when it is nil. Agents get it only by name (opt-in).
	Browsers *browser.Pool
	// Sessions holds ShellSession's shells and Python's interpreters (one
	// per agent run); its owner closes it at exit. Nil gives the two tools
	// a set of their own that lives as long as the process.
	Sessions *Sessions
}

// Builtin returns every built-in tool, each wrapped with WithRecover, in
// the order models see them: reading and searching first, then writing,
// execution, the web and helpers. The tools nearly every agent has come
// first (LS, Glob, Grep, ReadFile, RepoMap: every built-in agent and the
// Orchestrator; then Think, which all but Search have; then the three
// writers, which the Orchestrator and Code share, before GitDiff, which
// the Orchestrator, Review and QA share): a provider's prefix cache
// serves the definitions agents share only while their lists start
// alike. The list is explicit on purpose (no init registration): what a
// model can call is visible here. Tools that need
// the actor system (AgentTool) are added by their owners with Set.With. Modes and permissions choose among these by Info().Class.
func Builtin(opts BuiltinOptions) Set {
	ts := []tool.Tool{
		NewLS(),
		NewGlob(),
		NewGrep(),
		NewReadFile(),
		NewRepoMap(opts.RepoMaps),
		NewThink(),
		NewWriteFile(),
		NewEditTool(),
		NewMultiEdit(),
		NewGitDiffWith(opts.ExecuteCommand.Launcher),
		NewTree(),
		NewInitTool(),
		NewExecuteCommand(opts.ExecuteCommand),
		NewShellSession(opts.ExecuteCommand, opts.Sessions),
		NewPython(opts.ExecuteCommand, opts.Sessions),
		NewTodoWrite(),
		NewContextSummarizer(),
	}
	if opts.Fetcher != nil {
		ts = append(ts, NewWebFetch(opts.Fetcher))
	}
	ts = append(ts, NewWebSearch(opts.Searcher))
	if opts.Browsers != nil {
		ts = append(ts, NewWebBrowser(opts.Browsers, opts.Sessions))
	}
	return NewSet(ts...).Map(WithRecover)
}

// setMinimum sets the minimum of the numeric property prop.
func setMinimum(s *jsonschema.Schema, prop string, min float64) {
	s.Properties[prop].Minimum = &min
}

// setDefault documents the default of prop for the model.
func setDefault(s *jsonschema.Schema, prop string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		panic("tools: default for " + prop + ": " + err.Error())
	}
	s.Properties[prop].Default = raw
}

// setArray makes prop a plain array (the derived schema also allows null,
// which models should not send) with at least minItems items.
func setArray(s *jsonschema.Schema, prop string, minItems int) {
	p := s.Properties[prop]
	p.Type, p.Types = "array", nil
	if minItems > 0 {
		p.MinItems = &minItems
	}
}

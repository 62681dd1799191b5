package actors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/config/agents"
	"github.com/odin-code/odin/config/skills"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/prompts"
	"github.com/odin-code/odin/tools/tool"
)

// WriteScope limits which files an agent may write.
type WriteScope string

// Write scopes. The path guard enforces them.
const (
	WriteAny   WriteScope = ""      // whatever the session allows
	WriteTests WriteScope = "tests" // test files only (Test agent)
	WriteDocs  WriteScope = "docs"  // documentation files only (Docs agent)
)

// AgentDefinition is one roster entry: everything that makes the generic
// Specialist actor a particular specialist.
type AgentDefinition struct {
	Name        string
	Description string
	// Template is the prompts template for built-ins; Custom holds a custom
	// agent's own prompt text.
	Template string
	Custom   string
	// Source says where the definition comes from ("builtin", "odin.yaml",
	// ".odin/agents/x.md", or "builtin+odin.yaml" for an override).
	Source string
	// Tools is the allow list ("*" allows all); DisallowedTools always wins.
	Tools           []string
	DisallowedTools []string
	// CommandPatterns, when set, are the only commands the agent's
	// ExecuteCommand runs (Claude Code's Bash(git diff:*) tool spec), as
	// Odin command patterns; the session's policy still applies on top.
	CommandPatterns []string
	// Model is "main", "small" or a model id.
	Model      string
	Timeout    time.Duration
	MaxTimeout time.Duration
	MaxTurns   int
	MaxTokens  int64
	WriteScope WriteScope
	// NoInstructions keeps ODIN.md out of the prompt (Init, seed 004).
	NoInstructions bool
	// Role is the agent's part in the quality gates (see Role); Report
	// names its Report schema (config.ReportKinds; empty is generic).
	Role   Role
	Report string
	// PermissionMode caps the mode the agent works in ("" leaves the
	// turn's mode): an agent capped at plan cannot write in an edit turn.
	PermissionMode messages.Mode
	// CriticalReminder is appended as the last message of every model
	// request of the agent.
	CriticalReminder string
	// Color is the REPL colour of the agent's lines ("" for the default).
	Color string
	// Skills are the skills offered to the agent ("*" for all).
	Skills []string
	// OnDemand are tools of its set the agent rarely needs: a request
	// carries their definitions only after the agent asked for them with
	// LoadTools (see ondemand.go).
	OnDemand []string
	// Sandbox is the agent's sandbox profile for its commands.
	Sandbox config.AgentSandbox
	// Budget is what one run may spend; the supervisor enforces it.
	Budget messages.Budget
	// Isolation worktree runs the agent in its own git worktree
	// (isolation.go); a delegation may override it.
	Isolation messages.Isolation
	// Placement is where its tasks run on a cluster (placement.go).
	Placement Placement
	// user is set for an agent from a user-level folder (UserAgentDirs).
	user bool
	// locate places the definition's keys for errors (rosterpos.go); nil
	// for a built-in.
	locate locator
	// roleExplicit is set when the user declared Role, which then wins
	// over a built-in's default role.
	roleExplicit bool
	// tools caches the Report and delegation tools, built once per roster
	// entry: deriving and resolving a schema costs milliseconds, and 64
	// specialists must not pay it 64 times.
	tools *defTools
	// userAllow and userDeny are set when Tools or DisallowedTools came
	// from the user, whose names must exist; built-in lists may name tools
	// this session does not have (WebSearch without a backend).
	userAllow, userDeny bool
}

// defTools holds an entry's tools once built. Tools are immutable and safe
// for concurrent use, so every task of the agent shares them.
type defTools struct {
	reportOnce sync.Once
	report     tool.Tool
}

// ReportTool returns the agent's Report tool, whose schema is its
// structured result.
func (a *AgentDefinition) ReportTool() tool.Tool {
	build := func() tool.Tool { return a.schema().tool() }
	if a.tools == nil {
		return build()
	}
	a.tools.reportOnce.Do(func() { a.tools.report = build() })
	return a.tools.report
}

// Roster is the set of specialists of a session. It is immutable after
// LoadRoster.
type Roster struct {
	agents   []*AgentDefinition
	byName   map[string]*AgentDefinition
	byRole   map[Role]*AgentDefinition
	skills   []skills.Skill
	warnings []string
}

// Warnings are the problems LoadRoster worked around: an agent file naming
// a tool this session lacks (WebSearch without a backend, Claude's Task),
// an agent file left out until the project is trusted, a file that leads
// outside its directory. Each names the file.
func (r *Roster) Warnings() []string { return slices.Clone(r.warnings) }

// Agents returns the definitions sorted by name.
func (r *Roster) Agents() []*AgentDefinition { return slices.Clone(r.agents) }

// Skills are the skills found in RosterOptions.SkillDirs, by name.
func (r *Roster) Skills() []skills.Skill { return slices.Clone(r.skills) }

// Get returns the named agent.
func (r *Roster) Get(name string) (*AgentDefinition, bool) {
	a, ok := r.byName[name]
	return a, ok
}

// reportTool builds a Report tool whose input is the result type T.
func reportTool[T any](what string, opts ...tool.Option) tool.Tool {
	// The preamble states the Report rule (exactly once; only the Report
	// reaches the Orchestrator); the description names what it carries.
	desc := "Ends your task with " + what + ": call it exactly once, at the end."
	return tool.New[T]("Report", tool.ClassRead, desc, func(_ context.Context, _ *tool.Env, in T) (tool.Result, error) {
		return tool.Result{Output: "Report received. Your task is complete.", Meta: in}, nil
	}, opts...)
}

// odinFills removes from a Report schema the properties Odin fills in
// itself once the report is in (from what the agent's tools did, the lint
// pass, the QA criteria): the model would have to be told to leave them
// empty, every request of the agent would carry their definitions, and
// what it put there would be overwritten. With them gone from the schema
// a model that sends one anyway gets a validation error to correct.
// A property of an array's items is named "array[].property".
func odinFills(props ...string) tool.Option {
	return tool.WithSchema(func(s *jsonschema.Schema) {
		for _, path := range props {
			obj, p := s, path
			if array, prop, ok := strings.Cut(path, "[]."); ok {
				if a := s.Properties[array]; a != nil && a.Items != nil {
					obj, p = a.Items, prop
				}
			}
			if _, ok := obj.Properties[p]; !ok {
				panic("actors: the Report schema has no property " + path)
			}
			delete(obj.Properties, p)
			drop := func(name string) bool { return name == p }
			obj.Required = slices.DeleteFunc(obj.Required, drop)
			obj.PropertyOrder = slices.DeleteFunc(obj.PropertyOrder, drop)
		}
	})
}

// severityEnum makes issues[].severity of the ReviewResult schema an enum
// of messages.Severities, so that a reviewer writing "high" gets a
// validation error it can correct instead of a report the gate misreads.
func severityEnum(s *jsonschema.Schema) {
	issues := s.Properties["issues"]
	if issues == nil || issues.Items == nil || issues.Items.Properties["severity"] == nil {
		panic("actors: the ReviewResult schema has no issues[].severity")
	}
	sev := issues.Items.Properties["severity"]
	for _, v := range messages.Severities() {
		sev.Enum = append(sev.Enum, v)
	}
}

var (
	readTools  = []string{"ReadFile", "Glob", "Grep", "LS", "Tree"}
	writeTools = []string{"WriteFile", "EditTool", "MultiEditTool"}
	// thinking is seed 003's think tool, "default on": every built-in
	// agent that reads code to judge or find something has it (search,
	// research, code, review, QA). Search's also makes its list start as
	// QA's (LS ... RepoMap, Think, GitDiff): the two run on the small
	// model, whose prefix cache only the small model's requests fill, so
	// QA's first request is served Search's system message and first
	// seven tools. Without it they shared LS ... RepoMap, at the cache's
	// 1024-token minimum, and QA's first request got nothing. Only
	// research keeps a todo list of its own: the others do one delegated
	// task whose plan is the Orchestrator's, and TodoWrite's definition
	// (~400 tokens) rode on every one of their requests unused (issue 37).
	thinking = []string{"Think"}
	// lookup is what every agent that reads code has, in the order the
	// tool definitions are sent, so their requests start alike.
	lookup = []string{"ReadFile", "Glob", "Grep", "LS"}
	// mapping gives the agents that read code to change or judge it the
	// shape of the rest (seed 004: RepoMap for Code and Review, beside
	// Search and Init). QA has it too: it names each blocker by file and
	// line, and with it QA's tool list starts as Search's and Review's do
	// (LS ... RepoMap, Think, GitDiff).
	mapping = []string{"RepoMap"}
	// asking lets Code, Review and QA ask the researcher (seed 004's
	// ResearchRequest).
	asking = []string{NameResearchRequest}
	// shellSession is the persistent shell (issue #36) Code, Test and QA
	// get; Python is opt-in (tools:). Read-only modes drop both (see
	// statefulTools).
	shellSession = []string{"ShellSession"}
)

func list(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// Builtins returns the eight built-in specialists with seed 004's
// permissions, models and timeouts.
func Builtins() []*AgentDefinition {
	return []*AgentDefinition{
		{Name: "search", Template: prompts.Search, Model: "small", Timeout: 30 * time.Second, MaxTimeout: 60 * time.Second, MaxTurns: 20,
			Description: "Finds files, symbols and usages in the code, with paths and line numbers. Read-only.",
			Tools:       list(readTools, []string{"GitDiff", "RepoMap"}, thinking),
			Report:      "search"},
		{Name: "research", Template: prompts.Research, Model: "small", Timeout: 45 * time.Second, MaxTimeout: 120 * time.Second, MaxTurns: 20,
			Description: "Researches the web: library docs, error fixes, advisories, best practices. Read-only.",
			Tools:       list([]string{"ReadFile", "Glob", "Grep"}, []string{"WebFetch", "WebSearch", mcpAll}, thinking, []string{"TodoWrite"}),
			Report:      "research", Role: RoleResearcher},
		{Name: "code", Template: prompts.Code, Model: "main", Timeout: 120 * time.Second, MaxTimeout: 300 * time.Second, MaxTurns: 40,
			Description: "Implements changes in the project's conventions.",
			Tools:       list(lookup, mapping, writeTools, thinking, []string{"TodoWrite"}, asking, shellSession),
			OnDemand:    []string{"TodoWrite", NameResearchRequest, "ShellSession"},
			Report:      "code", Role: RoleFixer},
		{Name: "review", Template: prompts.Review, Model: "main", Timeout: 60 * time.Second, MaxTimeout: 120 * time.Second, MaxTurns: 20,
			Description: "Reviews changes for correctness, security, performance and maintainability. Read-only.",
			Tools:       list(lookup, mapping, []string{"GitDiff"}, thinking, asking),
			OnDemand:    []string{NameResearchRequest},
			Report:      "review", Role: RoleReviewer},
		{Name: "test", Template: prompts.Test, Model: "small", Timeout: 180 * time.Second, MaxTimeout: 600 * time.Second, MaxTurns: 30,
			Description: "Runs tests, writes missing ones (test files only), diagnoses failures.",
			Tools:       list(readTools, writeTools, []string{"ExecuteCommand", "TodoWrite"}, shellSession), WriteScope: WriteTests,
			Report: "test", Role: RoleTester},
		{Name: "docs", Template: prompts.Docs, Model: "small", Timeout: 60 * time.Second, MaxTimeout: 120 * time.Second, MaxTurns: 20,
			Description: "Writes and updates documentation (README, guides, changelogs).",
			Tools:       list(readTools, writeTools), WriteScope: WriteDocs,
			Report: "docs"},
		{Name: "qa", Template: prompts.QA, Model: "small", Timeout: 120 * time.Second, MaxTimeout: 300 * time.Second, MaxTurns: 20,
			Description: "Runs build, lint and test checks on a delivery and names blockers. Changes nothing.",
			Tools:       list(lookup, mapping, []string{"GitDiff"}, []string{"ExecuteCommand"}, thinking, asking, shellSession),
			OnDemand:    []string{"ShellSession", NameResearchRequest},
			Report:      "qa", Role: RoleDiagnostician},
		{Name: "init", Template: prompts.Init, Model: "small", Timeout: 90 * time.Second, MaxTimeout: 180 * time.Second, MaxTurns: 25,
			Description: "Drafts the sections of the project's ODIN.md. Read-only.",
			Tools:       list(readTools, []string{"RepoMap"}), NoInstructions: true,
			Report: "init"},
	}
}

// agentName is the form of an agent's and a skill's name.
var agentName = agents.ValidName

// RosterError is an invalid roster entry: where it is, which agent, which
// key, and what is wrong.
type RosterError struct {
	File, Agent, Key, Problem string
	// Line is the line of File the problem is on, 0 when unknown.
	Line int
}

// Error reads as an agent file's error does (agents.Error): one format
// for a roster entry's problems, whichever loader found them.
func (e *RosterError) Error() string {
	return (&agents.Error{File: e.File, Agent: e.Agent, Key: e.Key, Problem: e.Problem, Line: e.Line}).Error()
}

// RosterOptions are the inputs of LoadRoster.
type RosterOptions struct {
	// Config is the loaded configuration; its Agents map overrides and adds.
	Config *config.Config
	// ConfigFile names the file agents came from, for errors ("odin.yaml").
	ConfigFile string
	// ConfigDir resolves prompt_file entries.
	ConfigDir string
	// AgentDirs are directories of agent Markdown files (.odin/agents).
	AgentDirs []string
	// UserAgentDirs are the user's own agent directories
	// (~/.config/odin/agents, ~/.claude/agents), earlier ones first: their
	// agents need no trust, every project and AgentDirs agent of the same
	// name shadows them, and a file that does not parse is a warning, not
	// an error, so one stray file cannot stop every project.
	UserAgentDirs []string
	// ToolNames are the tools that exist; allow and deny lists are checked
	// against them.
	ToolNames []string
	// Untrusted leaves out the agent files that need trust (see
	// AgentTrustItems) because the user has not trusted the project.
	Untrusted bool
	// SkillDirs are directories of skills (a folder with a SKILL.md per
	// skill), earlier ones first: .odin/skills, then the user's.
	SkillDirs []string
	// Locate, when set, names the config file that set a dotted key
	// ("agents.NAME.tools") and the line it is on (0 when unknown), so
	// that errors about the config's agents point at it; a "" file keeps
	// ConfigFile.
	Locate func(key string) (file string, line int)
}

// LoadRoster builds the roster: the built-ins, overridden or extended by the
// config's agents and by agent Markdown files. The first invalid entry is
// returned as a *RosterError.
func LoadRoster(opts RosterOptions) (*Roster, error) {
	byName := map[string]*AgentDefinition{}
	for _, a := range Builtins() {
		a.Source = "builtin"
		byName[a.Name] = a
	}
	known := map[string]bool{}
	for _, n := range opts.ToolNames {
		known[n] = true
	}
	if len(known) > 0 {
		// Provided by the specialist itself, not by the session's set.
		known[NameResearchRequest] = true
		known[NameSkill] = true
	}
	file := opts.ConfigFile
	if file == "" {
		file = "odin.yaml"
	}
	if opts.Config != nil {
		names := make([]string, 0, len(opts.Config.Agents))
		for n := range opts.Config.Agents {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			if err := applyConfigAgent(byName, name, opts.Config.Agents[name], configLocator(opts.Locate, file, name), opts.ConfigDir); err != nil {
				return nil, err
			}
		}
	}
	var warnings []string
	files, warns, err := agentFiles(opts.ConfigDir, opts.AgentDirs)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, warns...)
	userFiles, warns := userAgentFiles(opts.UserAgentDirs)
	warnings = append(warnings, warns...)
	for _, a := range append(files, userFiles...) {
		if note := agentTrustNote(a); note != "" && opts.Untrusted && !a.user {
			warnings = append(warnings, fmt.Sprintf("%s: ignored until you run `odin trust` (%s)", a.Source, note))
			continue
		}
		if prev, ok := byName[a.Name]; ok && prev.Source != "builtin" && a.user {
			// The project's agents (files and odin.yaml) and the first
			// user folder shadow the user's others: a user-level agent
			// is a default, not a conflict.
			continue
		}
		if prev, ok := byName[a.Name]; ok && prev.Source != "builtin" {
			if strings.HasSuffix(prev.Source, ".md") && filepath.Dir(prev.Source) != filepath.Dir(a.Source) {
				// A project set up for both Odin and Claude Code: the
				// earlier directory (.odin/agents) wins.
				warnings = append(warnings, fmt.Sprintf("%s: agent %s is also defined in %s, which is used", a.where(""), a.Name, prev.where("")))
				continue
			}
			return nil, a.rosterErr("", "already defined in "+prev.where(""))
		}
		if len(known) > 0 {
			// An agent file written for another tool may name tools Odin
			// lacks or this session has not got: they are left out, said
			// once, and the agent still works with the others.
			a.Tools, warnings = knownTools(a, "tools", a.Tools, known, warnings)
			a.DisallowedTools, warnings = knownTools(a, "disallowed_tools", a.DisallowedTools, known, warnings)
			if len(a.Tools) == 0 {
				warnings = append(warnings, fmt.Sprintf("%s: agent %s left out: none of its tools exist here", a.where("tools"), a.Name))
				continue
			}
		}
		if prev, ok := byName[a.Name]; ok {
			// A file that replaces a built-in agent takes over its role in
			// the gates unless it declares another, so it reports in the
			// built-in's result schema (a replaced reviewer still says
			// approved and severities).
			if !a.roleExplicit {
				a.Role = prev.Role
			}
			if a.Report == "" {
				a.Report = prev.Report
			}
			if err := applyRoleReport(a, "", a.Report, a.rosterErr); err != nil {
				return nil, err
			}
		}
		byName[a.Name] = a
	}
	r := &Roster{byName: map[string]*AgentDefinition{}, warnings: warnings}
	for _, a := range byName {
		if err := checkAgent(a, known); err != nil {
			return nil, err
		}
		a.tools = &defTools{}
		r.byName[a.Name] = a
		r.agents = append(r.agents, a)
	}
	sort.Slice(r.agents, func(i, j int) bool { return r.agents[i].Name < r.agents[j].Name })
	byRole, roleWarnings, err := resolveRoles(r.agents)
	if err != nil {
		return nil, err
	}
	r.byRole = byRole
	r.warnings = append(r.warnings, roleWarnings...)
	found, skillWarnings := skills.Load(opts.SkillDirs)
	r.skills = found
	r.warnings = append(r.warnings, skillWarnings...)
	for _, a := range r.agents {
		for _, name := range a.Skills {
			if name != "*" && !slices.ContainsFunc(found, func(sk skills.Skill) bool { return sk.Name == name }) {
				r.warnings = append(r.warnings, fmt.Sprintf("%s: agent %s: skills: no skill %q in %s", a.where("skills"), a.Name, name, strings.Join(opts.SkillDirs, ", ")))
			}
		}
	}
	return r, nil
}

func applyConfigAgent(byName map[string]*AgentDefinition, name string, c config.Agent, locate locator, dir string) error {
	file, _ := locate("")
	rerr := func(key, problem string) error {
		f, line := locate(key)
		return &RosterError{File: f, Agent: name, Key: key, Problem: problem, Line: line}
	}
	if !agentName().MatchString(name) {
		return rerr("", "invalid agent name: use lowercase letters, digits, '-' and '_', starting with a letter")
	}
	a, builtin := byName[name]
	if c.Disabled {
		if !builtin {
			return rerr("disabled", "only built-in agents can be disabled")
		}
		delete(byName, name)
		return nil
	}
	if builtin {
		cp := *a
		a = &cp
		a.Source = "builtin+" + file
	} else {
		a = &AgentDefinition{Name: name, Source: file, Model: "main", Tools: []string{"*"},
			Timeout: 120 * time.Second, MaxTimeout: 300 * time.Second, MaxTurns: 30}
	}
	a.locate = locate
	if c.Description != "" {
		a.Description = c.Description
	}
	switch {
	case c.Prompt != "" && c.PromptFile != "":
		return rerr("prompt_file", "set either prompt or prompt_file, not both")
	case c.Prompt != "":
		a.Custom = c.Prompt
	case c.PromptFile != "":
		p := c.PromptFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return rerr("prompt_file", fmt.Sprintf("cannot read %s: %v", c.PromptFile, err))
		}
		a.Custom = string(data)
	}
	if a.Custom != "" && builtin {
		a.Template = ""
	}
	if !builtin {
		if a.Description == "" {
			return rerr("description", "required for a custom agent (say when to use it)")
		}
		if strings.TrimSpace(a.Custom) == "" {
			return rerr("prompt", "required for a custom agent (prompt or prompt_file)")
		}
	}
	if c.Tools != nil {
		a.Tools, a.userAllow = c.Tools, true
	}
	if c.DisallowedTools != nil {
		a.DisallowedTools, a.userDeny = c.DisallowedTools, true
	}
	if !builtin {
		a.userAllow, a.userDeny = true, true
	}
	if c.Model != "" {
		a.Model = c.Model
	}
	if c.Timeout != 0 {
		a.Timeout = c.Timeout
	}
	if c.MaxTimeout != 0 {
		a.MaxTimeout = c.MaxTimeout
	}
	if c.MaxTurns != 0 {
		a.MaxTurns = c.MaxTurns
	}
	if c.MaxTokens != 0 {
		a.MaxTokens = c.MaxTokens
	}
	if b := budgetOf(c.Budget); !b.IsZero() {
		a.Budget = b
	}
	if err := applyIsolation(a, c.Isolation, rerr); err != nil {
		return err
	}
	if err := applyDefinitionFields(a, definitionFields{role: c.Role, report: c.Report, permissionMode: c.PermissionMode,
		criticalReminder: c.CriticalReminder, color: c.Color, skills: c.Skills, sandbox: c.Sandbox}, rerr); err != nil {
		return err
	}
	if err := applyPlacement(a, c.Placement, rerr); err != nil {
		return err
	}
	byName[name] = a
	return nil
}

func checkAgent(a *AgentDefinition, known map[string]bool) error {
	rerr := a.rosterErr
	if len(known) > 0 {
		for _, t := range a.Tools {
			if a.userAllow && t != "*" && !known[t] && !isMCPPattern(t) {
				return rerr("tools", fmt.Sprintf("unknown tool %q (known: %s)", t, strings.Join(sortedKeys(known), ", ")))
			}
		}
		for _, t := range a.DisallowedTools {
			if a.userDeny && !known[t] && !isMCPPattern(t) {
				return rerr("disallowed_tools", fmt.Sprintf("unknown tool %q", t))
			}
		}
	}
	if len(a.Tools) == 0 {
		return rerr("tools", "empty allow list: the agent could not do anything (use [\"*\"] for all tools)")
	}
	if a.Timeout <= 0 {
		return rerr("timeout", "must be positive")
	}
	if a.MaxTimeout < a.Timeout {
		return rerr("timeout", fmt.Sprintf("%s exceeds max_timeout %s", a.Timeout, a.MaxTimeout))
	}
	if a.MaxTurns <= 0 {
		return rerr("max_turns", "must be positive")
	}
	if a.MaxTokens < 0 {
		return rerr("max_tokens", "must not be negative")
	}
	if a.Model == "" {
		return rerr("model", "must be main, small or a model id")
	}
	return checkPlacement(a, rerr)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// agentFiles parses the agent files of dirs (agents.Files) into roster
// entries; the first invalid one is the error.
func agentFiles(root string, dirs []string) ([]*AgentDefinition, []string, error) {
	files, warnings, err := agents.Files(root, dirs)
	if err != nil {
		return nil, nil, rosterError(err)
	}
	out := make([]*AgentDefinition, 0, len(files))
	for _, f := range files {
		a, err := fromFile(f)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, a)
	}
	return out, warnings, nil
}

// userAgentFiles parses the agent files of the user's folders
// (agents.UserFiles); an entry that is invalid is a warning and left out.
func userAgentFiles(dirs []string) ([]*AgentDefinition, []string) {
	files, warnings := agents.UserFiles(dirs)
	out := make([]*AgentDefinition, 0, len(files))
	for _, f := range files {
		a, err := fromFile(f)
		if err != nil {
			warnings = append(warnings, err.Error()+"; left out")
			continue
		}
		out = append(out, a)
	}
	return out, warnings
}

// rosterError makes an agent file's *agents.Error a *RosterError, the
// error LoadRoster documents.
func rosterError(err error) error {
	var fe *agents.Error
	if errors.As(err, &fe) {
		return &RosterError{File: fe.File, Agent: fe.Agent, Key: fe.Key, Problem: fe.Problem, Line: fe.Line}
	}
	return err
}

// fromFile makes an agent file a roster entry: the defaults of a custom
// agent under what the file sets, with its role, report, mode, colour,
// skills and sandbox checked.
func fromFile(f *agents.File) (*AgentDefinition, error) {
	a := &AgentDefinition{Name: f.Name, Source: f.Source, Description: f.Description,
		Custom: f.Prompt, Model: "main", Tools: []string{"*"}, userAllow: true, userDeny: true,
		Timeout: 120 * time.Second, MaxTimeout: 300 * time.Second, MaxTurns: 30, MaxTokens: f.MaxTokens, user: f.User,
		locate: func(key string) (string, int) { return f.Source, f.Line(key) }}
	if f.Tools != nil {
		a.Tools, a.CommandPatterns = f.Tools, f.CommandPatterns
	}
	if f.DisallowedTools != nil {
		a.DisallowedTools = f.DisallowedTools
	}
	if f.Model != "" {
		a.Model = f.Model
	}
	if f.Timeout != 0 {
		a.Timeout = f.Timeout
		if a.MaxTimeout < f.Timeout {
			a.MaxTimeout = f.Timeout
		}
	}
	if f.MaxTurns != 0 {
		a.MaxTurns = f.MaxTurns
	}
	a.Budget = budgetOf(f.Budget)
	rerr := a.rosterErr
	if err := applyIsolation(a, f.Isolation, rerr); err != nil {
		return nil, err
	}
	if err := applyDefinitionFields(a, definitionFields{role: f.Role, report: f.Report, permissionMode: f.PermissionMode,
		criticalReminder: f.CriticalReminder, color: f.Color, skills: f.Skills, sandbox: f.Sandbox}, rerr); err != nil {
		return nil, err
	}
	if err := applyPlacement(a, f.Placement, rerr); err != nil {
		return nil, err
	}
	return a, nil
}

// agentTrustNote says why a project agent file needs trust, "" when it
// does not: it replaces a built-in agent (the reviewer the mandatory gate
// relies on, say), or it runs on a model other than models.main and
// models.small. Its tool list cannot widen anything — an agent file gets
// every tool by default, and mode and policy filter them still.
func agentTrustNote(a *AgentDefinition) string {
	switch {
	case slices.Contains(config.BuiltinAgents(), a.Name):
		return "replaces the built-in " + a.Name + " agent"
	case a.Role != RoleNone:
		return "takes the " + string(a.Role) + " role from the built-in agent"
	case len(a.Sandbox.AllowedDomains) > 0:
		return "lets its commands reach " + strings.Join(a.Sandbox.AllowedDomains, ", ")
	case len(a.Sandbox.AllowUnixSockets) > 0:
		return "lets its commands reach the unix sockets " + strings.Join(a.Sandbox.AllowUnixSockets, ", ")
	case a.Model != "main" && a.Model != "small":
		return "runs on model " + strconv.Quote(a.Model)
	}
	return ""
}

// AgentTrustItems lists the agent files of dirs that wait for `odin
// trust` (see agentTrustNote), keyed by their path relative to root, with
// a digest of their content. Files that do not parse are left to
// LoadRoster to report.
func AgentTrustItems(root string, dirs []string) []config.TrustItem {
	files, _, _ := agentFiles(root, dirs)
	var items []config.TrustItem
	for _, a := range files {
		if note := agentTrustNote(a); note != "" {
			text := fmt.Sprintf("%q %q %q %q %q %q %q %q", a.Description, a.Custom, a.Tools, a.DisallowedTools, a.Model, a.Role, a.CriticalReminder, a.Sandbox.AllowedDomains)
			// Only when set, so that digests of files trusted before the
			// key existed still match.
			if len(a.Sandbox.AllowUnixSockets) > 0 {
				text += fmt.Sprintf(" %q", a.Sandbox.AllowUnixSockets)
			}
			sum := sha256.Sum256([]byte(text))
			items = append(items, config.TrustItem{Key: a.Source, Note: note, Digest: hex.EncodeToString(sum[:])})
		}
	}
	return items
}

// knownTools drops the names in list that are not tools of this session,
// with a warning naming the file and the tool.
func knownTools(a *AgentDefinition, key string, list []string, known map[string]bool, warnings []string) ([]string, []string) {
	var out []string
	for _, t := range list {
		// MCP names are patterns over the tools the session's servers
		// offer, known only when they connect: FilterTools matches them.
		if t == "*" || known[t] || strings.HasPrefix(t, "mcp__") {
			out = append(out, t)
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s: %s: unknown tool %q ignored", a.where(key), key, t))
	}
	return out, warnings
}

// applyIsolation sets an agent's isolation from its definition: "worktree",
// or "none" (and empty) for none.
func applyIsolation(a *AgentDefinition, v string, rerr func(key, problem string) error) error {
	switch v {
	case "":
	case "none":
		a.Isolation = messages.IsolationNone
	case string(messages.IsolationWorktree):
		a.Isolation = messages.IsolationWorktree
	default:
		return rerr("isolation", fmt.Sprintf("want worktree or none (got %q)", v))
	}
	return nil
}

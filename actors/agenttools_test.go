package actors

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// cliTools is the built-in set as the CLI builds it with the default
// configuration: WebFetch, and no web search backend (cmd/odin's
// baseTools leaves WebSearch out then).
func cliTools(t *testing.T) tools.Set {
	f, err := web.NewFetcher(config.Default().Web)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return tools.Builtin(tools.BuiltinOptions{Fetcher: f}).Filter(func(i tool.Info) bool { return i.Name != "WebSearch" })
}

func writeSkill(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(dir+"/"+name, 0o755); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("---\nname: %s\ndescription: the %s skill\n---\nDo it the %s way.\n", name, name, name)
	if err := os.WriteFile(dir+"/"+name+"/SKILL.md", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAgentToolsLayers: the one computation applies every layer — the
// declaration, the permission_mode cap over the turn's mode, Report,
// ResearchRequest where declared and a researcher exists, Skill where
// skills are offered, MCP tools by pattern.
func TestAgentToolsLayers(t *testing.T) {
	skills := t.TempDir()
	writeSkill(t, skills, "style")
	all := cliTools(t)
	cfg := config.Default()
	cfg.Agents = map[string]config.Agent{
		"helper":  {Description: "d", Prompt: "p", Tools: []string{"ReadFile", "ResearchRequest", "mcp__fx__*"}, Skills: []string{"style"}},
		"planner": {Description: "d", Prompt: "p", PermissionMode: "plan"},
		"denied":  {Description: "d", Prompt: "p", Tools: []string{"*"}, DisallowedTools: []string{"ResearchRequest", "Skill"}, Skills: []string{"*"}},
	}
	r, err := LoadRoster(RosterOptions{Config: cfg, ToolNames: all.Names(), SkillDirs: []string{skills}})
	if err != nil {
		t.Fatal(err)
	}
	mcpRead := fakeMCP{tool.Info{Name: "mcp__fx__lookup", Class: tool.ClassMCP, ReadOnly: true}}
	mcpWrite := fakeMCP{tool.Info{Name: "mcp__fx__crash", Class: tool.ClassMCP}}
	mcpOther := fakeMCP{tool.Info{Name: "mcp__gh__issue", Class: tool.ClassMCP, ReadOnly: true}}
	withMCP := all.With(mcpRead, mcpWrite, mcpOther)
	get := func(name string) *AgentDefinition {
		def, ok := r.Get(name)
		if !ok {
			t.Fatalf("no agent %s", name)
		}
		return def
	}
	for _, tc := range []struct {
		agent string
		mode  messages.Mode
		want  []string
	}{
		{"helper", messages.ModeEdit, []string{"ReadFile", "mcp__fx__lookup", "mcp__fx__crash", "ResearchRequest", "Skill", "Report"}},
		{"helper", messages.ModePlan, []string{"ReadFile", "mcp__fx__lookup", "ResearchRequest", "Skill", "Report"}},
		{"research", messages.ModeEdit, []string{"Glob", "Grep", "ReadFile", "Think", "TodoWrite", "WebFetch", "mcp__fx__lookup", "mcp__fx__crash", "mcp__gh__issue", "Report"}},
	} {
		got := AgentTools(withMCP, r, get(tc.agent), tc.mode).Names()
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s in %s (-want +got):\n%s", tc.agent, tc.mode, diff)
		}
	}
	// The cap holds in an edit turn: no write-class tool for the planner.
	for _, tl := range AgentTools(all, r, get("planner"), messages.ModeEdit).All() {
		if tl.Info().Class == tool.ClassWrite {
			t.Errorf("planner (permission_mode plan) is offered %s in an edit turn", tl.Info().Name)
		}
	}
	if !ReadOnlyAgent(all, get("planner")) {
		t.Error("an agent capped at plan should count as read-only")
	}
	names := AgentTools(all, r, get("denied"), messages.ModeEdit).Names()
	if slices.Contains(names, NameResearchRequest) || slices.Contains(names, NameSkill) {
		t.Errorf("denied tools offered: %v", names)
	}
	// Listed outside a run, ResearchRequest says it cannot ask anyone.
	rr, _ := AgentTools(all, r, get("code"), messages.ModeEdit).Get(NameResearchRequest)
	res, err := rr.Run(t.Context(), &tool.Env{}, []byte(`{"question":"q"}`))
	if err != nil || !res.IsError {
		t.Errorf("unrouted ResearchRequest = %+v, %v; want a refusal", res, err)
	}
	// No researcher in the roster: nobody to ask, no ResearchRequest.
	cfg.Agents = map[string]config.Agent{"research": {Disabled: true}}
	r2, err := LoadRoster(RosterOptions{Config: cfg, ToolNames: all.Names()})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := r2.Get("code"); slices.Contains(AgentTools(all, r2, code, messages.ModeEdit).Names(), NameResearchRequest) {
		t.Error("ResearchRequest offered with no researcher in the roster")
	}
}

// TestDocAgentTools: docs/agents.md's list of the built-in agents' tools is
// what AgentTools gives them (what `odin agents` and the wire show).
func TestDocAgentTools(t *testing.T) {
	readme, err := os.ReadFile("../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- agent-tools:begin -->\n", "<!-- agent-tools:end -->"
	_, rest, ok := strings.Cut(string(readme), begin)
	block, _, ok2 := strings.Cut(rest, end)
	all := cliTools(t)
	r, err := LoadRoster(RosterOptions{ToolNames: all.Names()})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("| agent | tools offered in an edit turn |\n|---|---|\n")
	for _, def := range r.Agents() {
		fmt.Fprintf(&want, "| %s | %s |\n", def.Name, strings.Join(ListedTools(all, r, def, messages.ModeEdit), ", "))
	}
	if !ok || !ok2 {
		t.Fatalf("docs/agents.md has no %q … %q block; it should hold:\n%s", begin, end, want.String())
	}
	if diff := cmp.Diff(want.String(), block); diff != "" {
		t.Errorf("docs/agents.md's agent tools block is stale (-want +got):\n%s", diff)
	}
}

// TestDelegationModels: the agent tool's model parameter offers the roles,
// the configured ids that resolve, and not Odin's own price list.
func TestDelegationModels(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	cfg := config.Default()
	cfg.ModelInfo["big-model"] = config.ModelInfo{ContextWindow: 64000}
	cfg.ModelInfo["elsewhere"] = config.ModelInfo{Provider: "nowhere"}
	got := DelegationModels(cfg, nil)
	want := []string{"main", "small", "big-model", "gpt-4o", "gpt-4o-mini"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	tl := agentTool(Builtins(), got, false)
	in := `{"agent":"search","description":"d","prompt":"p","model":"%s"}`
	if res, _ := tl.Run(t.Context(), &tool.Env{}, []byte(fmt.Sprintf(in, "big-model"))); res.IsError {
		t.Errorf("big-model refused: %s", res.Output)
	}
	if res, _ := tl.Run(t.Context(), &tool.Env{}, []byte(fmt.Sprintf(in, "gpt-4.1"))); !res.IsError {
		t.Error("gpt-4.1, not configured, accepted")
	}
}

// TestUserAgentDirs: user folders add agents without trust, the first
// folder wins over the second, the project's agents shadow them, and a
// broken user file is a warning.
func TestUserAgentDirs(t *testing.T) {
	write := func(dir, name, body string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/"+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, odinUser, claudeUser := t.TempDir(), t.TempDir(), t.TempDir()
	write(root+"/.odin/agents", "shared.md", "---\ndescription: project\n---\nP")
	write(odinUser, "shared.md", "---\ndescription: user\n---\nU")
	write(odinUser, "pricey.md", "---\ndescription: odin user\nmodel: big-model\n---\nO")
	write(claudeUser, "pricey.md", "---\ndescription: claude user\n---\nC")
	write(claudeUser, "broken.md", "no front matter")
	r, err := LoadRoster(RosterOptions{ConfigDir: root, AgentDirs: []string{root + "/.odin/agents"},
		UserAgentDirs: []string{odinUser, claudeUser}, Untrusted: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, desc := range map[string]string{"shared": "project", "pricey": "odin user"} {
		if def, ok := r.Get(name); !ok || def.Description != desc {
			t.Errorf("%s = %+v, want the %q one", name, def, desc)
		}
	}
	if !slices.ContainsFunc(r.Warnings(), func(w string) bool { return strings.Contains(w, "broken.md") }) {
		t.Errorf("no warning for the broken user file: %v", r.Warnings())
	}
	if slices.ContainsFunc(r.Warnings(), func(w string) bool { return strings.Contains(w, "odin trust") }) {
		t.Errorf("a user agent waits for trust: %v", r.Warnings())
	}
}

// An ask or plan turn's agent tool has no parameter that only governs
// writes: its definition is shorter, and a call passing one is refused by
// the schema rather than ignored.
func TestAgentToolReadOnly(t *testing.T) {
	edit, ask := agentTool(Builtins(), nil, false), agentTool(Builtins(), nil, true)
	for _, p := range writeOnlyParams {
		if !strings.Contains(string(edit.Info().Schema), `"`+p+`"`) {
			t.Errorf("the edit turn's agent tool lacks %s", p)
		}
		if strings.Contains(string(ask.Info().Schema), `"`+p+`"`) {
			t.Errorf("the read-only turn's agent tool has %s:\n%s", p, ask.Info().Schema)
		}
	}
	call := `{"agent":"search","description":"d","prompt":"p","only_files":["/x"]}`
	if res, _ := ask.Run(t.Context(), &tool.Env{}, []byte(call)); !res.IsError {
		t.Error("only_files accepted by the read-only agent tool")
	}
	if res, _ := edit.Run(t.Context(), &tool.Env{}, []byte(call)); res.IsError {
		t.Errorf("only_files refused in an edit turn: %s", res.Output)
	}
	if res, _ := ask.Run(t.Context(), &tool.Env{}, []byte(`{"agent":"search","description":"d","prompt":"p"}`)); res.IsError {
		t.Errorf("a plain delegation refused: %s", res.Output)
	}
}

// TestRunningSpecialistToolsMatchAgentTools: a running specialist's tools,
// built from the session's cached filtered built-ins and the MCP tools of
// the moment, are AgentTools' set — the same tools, definitions and order
// — for every agent and mode, asked twice (the second time from the
// cache), with and without MCP tools, and after the MCP list changes.
func TestRunningSpecialistToolsMatchAgentTools(t *testing.T) {
	skills := t.TempDir()
	writeSkill(t, skills, "style")
	all := cliTools(t)
	cfg := config.Default()
	cfg.Agents = map[string]config.Agent{
		"helper":  {Description: "d", Prompt: "p", Tools: []string{"ReadFile", "ResearchRequest", "mcp__fx__*"}, Skills: []string{"style"}},
		"planner": {Description: "d", Prompt: "p", PermissionMode: "plan"},
	}
	r, err := LoadRoster(RosterOptions{Config: cfg, ToolNames: all.Names(), SkillDirs: []string{skills}})
	if err != nil {
		t.Fatal(err)
	}
	mcp := []tool.Tool{fakeMCP{tool.Info{Name: "mcp__fx__lookup", Class: tool.ClassMCP, ReadOnly: true}},
		fakeMCP{tool.Info{Name: "mcp__fx__crash", Class: tool.ClassMCP}}}
	host := &specialistHost{}
	for _, withMCP := range []bool{false, true} {
		deps := &Deps{Tools: all, Roster: r}
		current := mcp[:1]
		if withMCP {
			deps.MCP = func() []tool.Tool { return current }
		}
		host.deps = deps
		for _, def := range r.Agents() {
			for _, mode := range []messages.Mode{messages.ModeAsk, messages.ModePlan, messages.ModeEdit} {
				for round := range 3 {
					if round == 2 {
						current = mcp // tools/list_changed
					}
					s := &specialist{deps: deps, host: host, t: &task{def: def, delegate: &messages.Delegate{Mode: mode}},
						extras: agentExtras(r, def, nil)}
					if s.extras == nil {
						s.extras = []tool.Tool{}
					}
					want := AgentTools(deps.allTools(), r, def, mode)
					got := s.agentToolsNow(nil)
					if diff := cmp.Diff(want.Defs(), got.Defs()); diff != "" {
						t.Fatalf("%s in %s, MCP %v, round %d (-AgentTools +running):\n%s", def.Name, mode, withMCP, round, diff)
					}
				}
				current = mcp[:1]
			}
		}
	}
	// A new built-in set (another session's) is not served from the cache.
	fewer := all.Filter(func(i tool.Info) bool { return i.Name != "Grep" })
	search, _ := r.Get("search")
	s := &specialist{deps: &Deps{Tools: fewer, Roster: r}, host: host, t: &task{def: search, delegate: &messages.Delegate{Mode: messages.ModeEdit}}, extras: []tool.Tool{}}
	if _, ok := s.agentToolsNow(nil).Get("Grep"); ok {
		t.Error("a specialist of a set without Grep is offered Grep from the cache of another set")
	}
}

package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// NameLoadTools is the tool through which an agent asks for the tools it
// is offered on demand. Every request of an agent repeats its tool
// definitions, so a tool it rarely calls costs its definition on each of
// them: the demo's Code specialist sent TodoWrite and ResearchRequest
// (~1.2 KB) on each of its 11 requests and called neither. An agent's
// OnDemand tools are listed instead, one line each, in the description of
// LoadTools; once the agent calls LoadTools with their names, its next
// requests carry their definitions, after all the others (loading changes
// none of the definitions before them, so a provider's prefix cache still
// serves those). The trade: a run that needs one pays one more request,
// and the messages after the tools are sent uncached once. The tools stay
// in the agent's set, so a call to one that was not loaded still runs.
// What is loaded is read from the conversation (the LoadTools calls in
// it), so a resumed or restarted run offers the same tools.
const NameLoadTools = "LoadTools"

// orchestratorOnDemand are the Orchestrator's tools offered on demand:
// ODIN.md is written once in a project's life, long material usually goes
// to a specialist, the web to the Research specialist (seed 004 gives the
// Orchestrator no web tool; it keeps WebFetch for a page the user names),
// and the rules decide most reviews (RequestReview only adds one).
var orchestratorOnDemand = []string{tools.NameInitTool, tools.NameContextSummarizer, tools.NameWebFetch, reviewToolName}

// loadToolsTool returns LoadTools for the tools of set named in onDemand,
// or false when set has none of them.
func loadToolsTool(set tools.Set, onDemand []string) (tool.Tool, bool) {
	var names, lines []string
	for _, n := range onDemand {
		if t, ok := set.Get(n); ok && !slices.Contains(names, n) {
			names = append(names, n)
			line, ok := onDemandLines[n]
			if !ok {
				line = firstClause(t.Info().Description)
			}
			lines = append(lines, "- "+n+": "+line)
		}
	}
	if len(names) == 0 {
		return nil, false
	}
	desc := "Loads tools you have on demand: call them from your next step.\n" + strings.Join(lines, "\n")
	enum, _ := json.Marshal(names)
	schema := json.RawMessage(`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string","enum":` + string(enum) + `},"minItems":1}},"required":["names"],"additionalProperties":false}`)
	return tool.NewPrecomputed[loadToolsInput](NameLoadTools, tool.ClassRead, desc, schema,
		func(_ context.Context, _ *tool.Env, in loadToolsInput) (tool.Result, error) {
			for _, n := range in.Names {
				if !slices.Contains(names, n) {
					return tool.Errorf("%q is not a tool you have on demand; those are %s", n, strings.Join(names, ", ")), nil
				}
			}
			return tool.Result{Output: fmt.Sprintf("Loaded %s: call them from your next step.", strings.Join(in.Names, ", "))}, nil
		}), true
}

// onDemandLines say in a few words what each built-in tool offered on
// demand is for; another tool's line is its description's opening.
var onDemandLines = map[string]string{
	tools.NameTodoWrite:         "your task list, shown to the user",
	NameResearchRequest:         "ask the Research agent about docs, errors or advisories outside the repository",
	tools.NameShellSession:      "a persistent sandboxed shell for your task",
	tools.NameInitTool:          "write sections of ODIN.md, the project context",
	tools.NameContextSummarizer: "summarise long material with a small model",
	tools.NameWebFetch:          "read a web page (a small model answers about it)",
	reviewToolName:              "ask for review and QA the rules would not require",
}

type loadToolsInput struct {
	Names []string `json:"names"`
}

// offeredDefs are the definitions a request of an agent carries: set's,
// without the tools of onDemand the conversation has not loaded, and with
// those it has loaded last, in the order they were loaded.
func offeredDefs(set tools.Set, onDemand []string, history []llm.Message) []llm.ToolDef {
	defs := set.Defs()
	if _, ok := set.Get(NameLoadTools); !ok {
		return defs
	}
	loaded := loadedTools(history)
	out := make([]llm.ToolDef, 0, len(defs))
	for _, d := range defs {
		if !slices.Contains(onDemand, d.Name) {
			out = append(out, d)
		}
	}
	for _, n := range loaded {
		if i := slices.IndexFunc(defs, func(d llm.ToolDef) bool { return d.Name == n }); i >= 0 && slices.Contains(onDemand, n) {
			out = append(out, defs[i])
		}
	}
	return out
}

// loadedTools names the tools the LoadTools calls of history asked for,
// in the order they were first asked for.
func loadedTools(history []llm.Message) []string {
	var out []string
	for _, m := range history {
		for _, c := range m.ToolCalls {
			if c.Name != NameLoadTools {
				continue
			}
			var in loadToolsInput
			if json.Unmarshal([]byte(c.Arguments), &in) != nil {
				continue
			}
			for _, n := range in.Names {
				if !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// firstClause is a description's opening, up to the first sentence or
// clause break outside parentheses: one line of LoadTools' list.
func firstClause(desc string) string {
	depth := 0
	for i, r := range desc {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case '.', ';', ':', '\n':
			if depth == 0 && (i+1 == len(desc) || desc[i+1] == ' ' || desc[i+1] == '\n' || r == '\n') {
				return strings.TrimSpace(desc[:i])
			}
		}
	}
	return strings.TrimSpace(desc)
}

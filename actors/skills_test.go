package actors

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// An agent offered a skill sees its name and description in the Skill
// tool and loads its instructions on demand; an agent not offered skills
// has no Skill tool; a broken SKILL.md is reported, not fatal.
func TestSkillsLoadedOnDemand(t *testing.T) {
	dir := t.TempDir()
	writeAgent(t, filepath.Join(dir, "go-style", "SKILL.md"), "---\nname: go-style\ndescription: \"How this team writes Go: errors, naming.\"\n---\nSKILL-BODY-77: wrap errors with the operation.\n")
	writeAgent(t, filepath.Join(dir, "broken", "SKILL.md"), "no front matter\n")
	writeAgent(t, filepath.Join(dir, "notes.txt"), "not a skill\n")
	cfg := config.Default()
	cfg.Agents = map[string]config.Agent{
		"styler": {Description: "styles", Prompt: "Style.", Tools: []string{"ReadFile"}, Skills: []string{"go-style", "missing"}},
	}
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("styler", "style", "style the code"), delegation("search", "find", "find it")),
			llmtest.Reply("done"),
		).
		Add("styler",
			llmtest.Calls(llmtest.Call(NameSkill, map[string]any{"name": "go-style"})),
			llmtest.Step{When: "SKILL-BODY-77", ToolCalls: report(map[string]any{"summary": "styled", "details": ""}).ToolCalls},
		).
		Add("search", searchReport("found"))
	var roster *Roster
	h := newHarness(t, s, func(d *Deps) {
		r, err := LoadRoster(RosterOptions{Config: cfg, ToolNames: d.Tools.Names(), SkillDirs: []string{dir}})
		if err != nil {
			t.Fatal(err)
		}
		roster, d.Roster = r, r
	})
	w := strings.Join(roster.Warnings(), "\n")
	if strings.Contains(w, "notes.txt") || strings.Contains(w, "go-style/SKILL.md") {
		t.Errorf("warnings about a good skill or a plain file:\n%s", w)
	}
	for _, want := range []string{filepath.Join(dir, "broken", "SKILL.md") + ": missing YAML front matter", `agent styler: skills: no skill "missing"`} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	h.sess.Submit("style it", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnDone {
		t.Fatalf("turn = %+v", r)
	}
	styler := h.client.RequestsFor("styler")
	if len(styler) != 2 {
		t.Fatalf("styler sent %d requests, want 2 (the skill body answered the Skill call)", len(styler))
	}
	var desc string
	for _, d := range styler[0].Tools {
		if d.Name == NameSkill {
			desc = d.Description
		}
	}
	if !strings.Contains(desc, "- go-style: How this team writes Go: errors, naming.") || strings.Contains(desc, "SKILL-BODY-77") {
		t.Errorf("Skill description = %q: want the listing, not the body", desc)
	}
	if slices.Contains(toolNames(h.client.RequestsFor("search")[0]), NameSkill) {
		t.Error("an agent offered no skills got the Skill tool")
	}
}

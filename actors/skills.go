package actors

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/odin-code/odin/config/skills"
	"github.com/odin-code/odin/tools/tool"
)

// NameSkill is the tool that loads a skill's instructions.
const NameSkill = "Skill"

// skillsFor are the skills an agent is offered: those its definition
// names, or all for "*".
func skillsFor(def *AgentDefinition, all []skills.Skill) []skills.Skill {
	var out []skills.Skill
	for _, sk := range all {
		if slices.Contains(def.Skills, "*") || slices.Contains(def.Skills, sk.Name) {
			out = append(out, sk)
		}
	}
	return out
}

// skillTool returns the Skill tool offering skills: its description lists
// them by name and description; a call returns the named skill's
// instructions, read when asked (off the mailbox, like every tool run).
func skillTool(offered []skills.Skill) tool.Tool {
	var b strings.Builder
	b.WriteString("Load a skill: instructions for a kind of task, written for this project or this user. Call it with a skill's name when your task matches its description, then follow what it says.\n\nAvailable skills:\n")
	byName := map[string]skills.Skill{}
	for _, sk := range offered {
		fmt.Fprintf(&b, "- %s: %s\n", sk.Name, sk.Description)
		byName[sk.Name] = sk
	}
	type in struct {
		Name string `json:"name" jsonschema:"the skill's name, as listed"`
	}
	return tool.New[in](NameSkill, tool.ClassRead, strings.TrimRight(b.String(), "\n"),
		func(_ context.Context, _ *tool.Env, in in) (tool.Result, error) {
			sk, ok := byName[in.Name]
			if !ok {
				names := make([]string, 0, len(byName))
				for n := range byName {
					names = append(names, n)
				}
				sort.Strings(names)
				return tool.Errorf("no skill %q (available: %s)", in.Name, strings.Join(names, ", ")), nil
			}
			body, err := skills.Read(sk.Path)
			if err != nil {
				return tool.Errorf("skill %s cannot be read: %v", sk.Name, err), nil
			}
			return tool.Result{Output: fmt.Sprintf("Skill %s (%s):\n\n%s", sk.Name, sk.Path, body)}, nil
		})
}

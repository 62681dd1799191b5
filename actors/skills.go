package actors

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/tools/tool"
)

// NameSkill is the tool that loads a skill's instructions.
const NameSkill = "Skill"

// maxSkillBytes bounds a SKILL.md: a skill is instructions, not a data set.
const maxSkillBytes = 256 << 10

// Skill is a Claude Code skill: a folder holding a SKILL.md whose YAML
// front matter gives its name and a description of when to use it, and
// whose body is the instructions. An agent sees the name and description
// of each skill it is offered and loads the body with the Skill tool when
// it needs it, so unused skills cost one line of a tool description.
type Skill struct {
	Name, Description string
	// Path is the SKILL.md file.
	Path string
}

type skillFrontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Claude Code's keys, accepted and not used: the agent's own tool
	// list decides what it may call.
	AllowedTools any    `yaml:"allowed-tools"`
	License      string `yaml:"license"`
	Metadata     any    `yaml:"metadata"`
	Version      any    `yaml:"version"`
}

// loadSkills reads the skills of dirs (a folder per skill); a name found
// in an earlier directory wins, with a warning. A SKILL.md that does not
// parse, or that leads outside its directory, is left out with a warning
// naming the file: a broken skill must not stop the session.
func loadSkills(dirs []string) ([]Skill, []string) {
	var out []Skill
	var warnings []string
	seen := map[string]string{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !os.IsNotExist(err) {
				warnings = append(warnings, fmt.Sprintf("%s: %v", dir, err))
			}
			continue
		}
		realDir, err := workspace.Resolve("/", dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
				continue
			}
			path := filepath.Join(dir, e.Name(), "SKILL.md")
			if _, err := os.Stat(path); err != nil {
				continue // no SKILL.md: not a skill
			}
			real, err := workspace.Resolve("/", path)
			if err != nil {
				continue // no SKILL.md: not a skill
			}
			if !workspace.Within(realDir, real) {
				warnings = append(warnings, fmt.Sprintf("%s: leads outside %s; not read", path, dir))
				continue
			}
			sk, err := parseSkill(path)
			if err != nil {
				warnings = append(warnings, err.Error())
				continue
			}
			if prev, dup := seen[sk.Name]; dup {
				warnings = append(warnings, fmt.Sprintf("%s: skill %s is also defined in %s, which is used", path, sk.Name, prev))
				continue
			}
			seen[sk.Name] = path
			out = append(out, sk)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, warnings
}

// parseSkill reads a SKILL.md's front matter.
func parseSkill(path string) (Skill, error) {
	head, _, err := readSkill(path)
	if err != nil {
		return Skill{}, err
	}
	var fm skillFrontMatter
	dec := yaml.NewDecoder(bytes.NewReader([]byte(head)))
	if err := dec.Decode(&fm); err != nil {
		return Skill{}, fmt.Errorf("%s: front matter: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	name := fm.Name
	if name == "" {
		name = filepath.Base(filepath.Dir(path))
	}
	switch {
	case !agentName().MatchString(name):
		return Skill{}, fmt.Errorf("%s: name: invalid skill name %q: use lower-case letters, digits, '-' and '_'", path, name)
	case strings.TrimSpace(fm.Description) == "":
		return Skill{}, fmt.Errorf("%s: description: required (say when to use the skill)", path)
	}
	return Skill{Name: name, Description: strings.Join(strings.Fields(fm.Description), " "), Path: path}, nil
}

// readSkill splits a SKILL.md into its front matter and body.
func readSkill(path string) (head, body string, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("%s: %v", path, err)
	}
	if fi.Size() > maxSkillBytes {
		return "", "", fmt.Errorf("%s: larger than %d KiB", path, maxSkillBytes>>10)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("%s: %v", path, err)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return "", "", fmt.Errorf("%s: missing YAML front matter (a file starting with ---)", path)
	}
	head, body, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return "", "", fmt.Errorf("%s: unterminated YAML front matter (no closing ---)", path)
	}
	return head, strings.TrimSpace(strings.TrimPrefix(body, "\n")), nil
}

// skillsFor are the skills an agent is offered: those its definition
// names, or all for "*".
func skillsFor(def *AgentDefinition, all []Skill) []Skill {
	var out []Skill
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
func skillTool(skills []Skill) tool.Tool {
	var b strings.Builder
	b.WriteString("Load a skill: instructions for a kind of task, written for this project or this user. Call it with a skill's name when your task matches its description, then follow what it says.\n\nAvailable skills:\n")
	byName := map[string]Skill{}
	for _, sk := range skills {
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
			_, body, err := readSkill(sk.Path)
			if err != nil {
				return tool.Errorf("skill %s cannot be read: %v", sk.Name, err), nil
			}
			return tool.Result{Output: fmt.Sprintf("Skill %s (%s):\n\n%s", sk.Name, sk.Path, body)}, nil
		})
}

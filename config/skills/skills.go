package skills

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/workspace"
)

// validName is the form of a skill name, the same as an agent's.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{0,40}$`) })

// maxBytes bounds a SKILL.md: a skill is instructions, not a data set.
const maxBytes = 256 << 10

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

// Load reads the skills of dirs (a folder per skill); a name found
// in an earlier directory wins, with a warning. A SKILL.md that does not
// parse, or that leads outside its directory, is left out with a warning
// naming the file: a broken skill must not stop the session.
func Load(dirs []string) ([]Skill, []string) {
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
			sk, err := parse(path)
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

// parse reads a SKILL.md's front matter.
func parse(path string) (Skill, error) {
	head, _, err := split(path)
	if err != nil {
		return Skill{}, err
	}
	var fm skillFrontMatter
	dec := yaml.NewDecoder(bytes.NewReader([]byte(head)))
	if err := dec.Decode(&fm); err != nil {
		return Skill{}, frontMatterError(path, []byte(head), err)
	}
	name := fm.Name
	if name == "" {
		name = filepath.Base(filepath.Dir(path))
	}
	switch {
	case !validName().MatchString(name):
		return Skill{}, fmt.Errorf("%s: name: invalid skill name %q: use lower-case letters, digits, '-' and '_'", path, name)
	case strings.TrimSpace(fm.Description) == "":
		return Skill{}, fmt.Errorf("%s: description: required (say when to use the skill)", path)
	}
	return Skill{Name: name, Description: strings.Join(strings.Fields(fm.Description), " "), Path: path}, nil
}

// Read returns a SKILL.md's instructions (its body), read when an agent
// asks for them; the file is checked again as Load checked it.
func Read(path string) (string, error) {
	_, body, err := split(path)
	return body, err
}

// split splits a SKILL.md into its front matter and body.
func split(path string) (head, body string, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("%s: %v", path, err)
	}
	if fi.Size() > maxBytes {
		return "", "", fmt.Errorf("%s: larger than %d KiB", path, maxBytes>>10)
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

// frontMatterError names the file and line of a fault in a front matter
// (head, which starts on the file's second line, after "---").
func frontMatterError(path string, head []byte, err error) error {
	p := config.YAMLErrors(head, err)[0]
	if p.Line > 0 {
		path += ":" + strconv.Itoa(p.Line+1)
	}
	return fmt.Errorf("%s: front matter: %s", path, strings.TrimPrefix(p.Msg, "yaml: "))
}

package agents

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/compat"
	"github.com/odin-code/odin/internal/dotkey"
	"github.com/odin-code/odin/internal/workspace"
)

// ValidName is the form of an agent's (and a skill's) name.
var ValidName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{0,40}$`) })

// File is one agent Markdown file as written: its front matter's keys,
// with other formats' tool and model names mapped to Odin's, and its body.
// Unset keys are zero (Tools nil, Model ""); the roster fills in the
// defaults and checks the values that need it (role, report, mode,
// colour, skills, sandbox).
type File struct {
	Name, Description string
	// Prompt is the body after the front matter.
	Prompt string
	// Source names the file: relative to the project root, absolute for
	// the user's own folders.
	Source string
	// Tools is the allow list ("*" for all), nil when the file gives none;
	// CommandPatterns restrict ExecuteCommand (Claude Code's Bash(...)).
	Tools, CommandPatterns, DisallowedTools []string
	Model                                   string
	Timeout                                 time.Duration
	MaxTurns                                int
	MaxTokens                               int64
	Role, Report, PermissionMode            string
	CriticalReminder, Color                 string
	Skills                                  []string
	Sandbox                                 config.AgentSandbox
	Budget                                  config.Budget
	// Isolation and Placement as written ("worktree", "remote"…); the
	// roster checks them.
	Isolation, Placement string
	// User is set for a file of the user's own folders (UserFiles).
	User bool
	// Lines maps each front matter key, dotted as config.YAMLKeyLines
	// spells it ("sandbox.allowed_domains[0]"), and "prompt" for the body,
	// to its 1-based line in the file, so that checks made after parsing
	// (the roster's) can point at the line as Parse's own errors do.
	Lines map[string]int
}

// Line is the line of key in the file: the key's own, else its nearest
// enclosing key's, else 1 (the front matter's opening "---", where a key
// the file leaves out would go).
func (f *File) Line(key string) int {
	if l, ok := dotkey.Lookup(f.Lines, key); ok {
		return l
	}
	if key == "" {
		if l, ok := f.Lines["name"]; ok {
			return l
		}
	}
	return 1
}

// Error is an invalid agent definition: where it is, which agent, which
// key, and what is wrong.
type Error struct {
	File, Agent, Key, Problem string
	// Line is the line of File the problem is on; 0 when it is not on one.
	Line int
}

func (e *Error) Error() string {
	key := "agents." + e.Agent
	if e.Key != "" {
		key += "." + e.Key
	}
	if strings.HasSuffix(e.File, ".md") {
		key = e.Agent
		if e.Key != "" {
			key += ": " + e.Key
		}
	}
	file := e.File
	if e.Line > 0 {
		file += ":" + strconv.Itoa(e.Line)
	}
	return fmt.Sprintf("%s: %s: %s", file, key, e.Problem)
}

// Tool names used by other agent formats (Claude Code, opencode, Gemini
// CLI), mapped to Odin's, so existing agent files work unchanged.
var foreignTools = map[string]string{
	"Read": "ReadFile", "read": "ReadFile", "read_file": "ReadFile",
	"Write": "WriteFile", "write": "WriteFile", "write_file": "WriteFile",
	"Edit": "EditTool", "edit": "EditTool", "replace": "EditTool",
	"MultiEdit": "MultiEditTool", "multiedit": "MultiEditTool",
	"Bash": "ExecuteCommand", "bash": "ExecuteCommand", "run_shell_command": "ExecuteCommand",
	"grep": "Grep", "search_file_content": "Grep",
	"glob": "Glob", "ls": "LS", "list_directory": "LS",
	"webfetch": "WebFetch", "web_fetch": "WebFetch", "web_browser": "WebBrowser",
	"WebSearch": "WebSearch", "websearch": "WebSearch", "google_web_search": "WebSearch",
	"todowrite": "TodoWrite", "write_todos": "TodoWrite",
	"bash_session": "ShellSession", "python": "Python",
}

// Model aliases of other agent formats.
var foreignModels = map[string]string{
	"inherit": "main", "sonnet": "main", "opus": "main", "haiku": "small",
}

type frontMatter struct {
	Name            string     `yaml:"name"`
	Description     string     `yaml:"description"`
	Tools           toolList   `yaml:"tools"`
	DisallowedTools stringList `yaml:"disallowed_tools"`
	Model           string     `yaml:"model"`
	Timeout         string     `yaml:"timeout"`
	MaxTurns        int        `yaml:"max_turns"`
	MaxTokens       int64      `yaml:"max_tokens"`
	// Seed 001's agent definition fields (see config.Agent).
	Role             string              `yaml:"role"`
	Report           string              `yaml:"report"`
	PermissionMode   string              `yaml:"permission_mode"`
	CriticalReminder string              `yaml:"critical_reminder"`
	Color            string              `yaml:"color"`
	Skills           stringList          `yaml:"skills"`
	Sandbox          config.AgentSandbox `yaml:"sandbox"`
	Budget           config.Budget       `yaml:"budget"`
	Isolation        string              `yaml:"isolation"`
	Placement        string              `yaml:"placement"`
	// Accepted for compatibility with other formats; Odin ignores them
	// (opencode's permission, disable and top_p included: the session's
	// policy and the roster decide those).
	Mode        string `yaml:"mode"`
	Temperature any    `yaml:"temperature"`
	TopP        any    `yaml:"top_p"`
	Permission  any    `yaml:"permission"`
	Disable     bool   `yaml:"disable"`
	// Claude Code's permissionMode (default, acceptEdits, plan,
	// bypassPermissions) maps onto permission_mode.
	ClaudePermissionMode string `yaml:"permissionMode"`
}

// stringList accepts a YAML list or a comma-separated string ("Read, Grep")
// or, as opencode writes it, a map of tool name to enabled.
type stringList []string

func (s *stringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		for _, part := range strings.Split(n.Value, ",") {
			if p := strings.TrimSpace(part); p != "" {
				*s = append(*s, p)
			}
		}
		return nil
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		*s = l
		return nil
	}
	return fmt.Errorf("line %d: want a list of tool names", n.Line)
}

// toolList is an agent file's tools: a list or comma-separated string of
// the tools allowed, or, as opencode writes it, a map of toggles over
// every tool ({write: false, bash: false} is all tools but those two;
// with "*": false only the tools switched on).
type toolList struct {
	allow stringList
	off   []string
}

func (t *toolList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return t.allow.UnmarshalYAML(n)
	}
	var m map[string]bool
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("line %d: want a list of tool names or a map of tool name to true or false", n.Line)
	}
	all, starSet := m["*"]
	if !starSet {
		all = true
	}
	for k, on := range m {
		switch {
		case k == "*":
		case on && !all:
			t.allow = append(t.allow, k)
		case !on:
			t.off = append(t.off, k)
		}
	}
	if all {
		t.allow = stringList{"*"}
	}
	sort.Strings(t.allow)
	sort.Strings(t.off)
	return nil
}

// Parse reads the agent file at path; rel names it in errors (the path
// relative to the project root). A file without YAML front matter, with an
// unknown key, an invalid name or duration, a negative budget, or without
// a description or a prompt is an *Error.
func Parse(path, rel string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	base := strings.TrimSuffix(filepath.Base(path), ".md")
	agent := base
	var lines map[string]int // set once the front matter parses
	rerr := func(key, problem string) error {
		e := &Error{File: rel, Agent: agent, Key: key, Problem: problem}
		if lines != nil {
			e.Line = (&File{Lines: lines}).Line(key)
		}
		return e
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, rerr("", "missing YAML front matter (a file starting with ---)")
	}
	head, body, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return nil, rerr("", "unterminated YAML front matter (no closing ---)")
	}
	body = strings.TrimPrefix(body, "\n")
	var fm frontMatter
	dec := yaml.NewDecoder(bytes.NewReader([]byte(head)))
	dec.KnownFields(true)
	if err := dec.Decode(&fm); err != nil {
		problems := config.YAMLErrors([]byte(head), err)
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = strings.TrimPrefix(p.Msg, "yaml: ")
		}
		e := &Error{File: rel, Agent: base, Problem: "front matter: " + strings.Join(msgs, "; ")}
		if problems[0].Line > 0 {
			e.Line = problems[0].Line + 1
		}
		return nil, e
	}
	keyLines := config.YAMLKeyLines([]byte(head))
	lines = make(map[string]int, len(keyLines)+1)
	for k, l := range keyLines {
		// The front matter starts on the file's second line, after "---".
		lines[k] = l + 1
	}
	// The body starts after "---", the front matter and "---".
	lines["prompt"] = strings.Count(head, "\n") + 4
	name := fm.Name
	if name == "" {
		name = base
	}
	if !ValidName().MatchString(name) {
		return nil, rerr("name", fmt.Sprintf("invalid agent name %q: use lowercase letters, digits, '-' and '_'", name))
	}
	f := &File{Name: name, Source: rel, Description: strings.TrimSpace(fm.Description), Prompt: strings.TrimSpace(body),
		MaxTurns: fm.MaxTurns, MaxTokens: fm.MaxTokens, Role: fm.Role, Report: fm.Report, PermissionMode: fm.PermissionMode,
		CriticalReminder: fm.CriticalReminder, Color: fm.Color, Skills: fm.Skills, Sandbox: fm.Sandbox, Budget: fm.Budget,
		Isolation: fm.Isolation, Placement: fm.Placement, Lines: lines}
	agent = name
	if f.Description == "" {
		return nil, rerr("description", "required (say when to use the agent)")
	}
	if f.Prompt == "" {
		return nil, rerr("prompt", "the body after the front matter is the agent's prompt and must not be empty")
	}
	if len(fm.Tools.allow) > 0 {
		var allow []string
		allow, f.CommandPatterns = toolSpecs(fm.Tools.allow)
		f.Tools = mapTools(allow)
	}
	if len(fm.DisallowedTools) > 0 || len(fm.Tools.off) > 0 {
		f.DisallowedTools = mapTools(append(slices.Clone(fm.Tools.off), fm.DisallowedTools...))
	}
	if fm.Model != "" {
		f.Model = fm.Model
		if m, ok := foreignModels[fm.Model]; ok {
			f.Model = m
		}
	}
	if fm.Timeout != "" {
		d, err := time.ParseDuration(fm.Timeout)
		if err != nil || d <= 0 {
			return nil, rerr("timeout", fmt.Sprintf("invalid duration %q (use e.g. 90s or 2m)", fm.Timeout))
		}
		f.Timeout = d
	}
	if fm.Budget.Tokens < 0 || fm.Budget.ToolCalls < 0 || fm.Budget.Wall < 0 || fm.Budget.USD < 0 {
		return nil, rerr("budget", "limits must not be negative")
	}
	if f.PermissionMode == "" && fm.ClaudePermissionMode == "plan" {
		f.PermissionMode = "plan"
	}
	return f, nil
}

// Files parses the agent Markdown files of dirs (the project's
// .odin/agents, .claude/agents), in order. A file that is a symlink
// leading out of its directory is not read (the same resolver as ReadFile)
// and is reported in the warnings; a file that does not parse is an error.
func Files(root string, dirs []string) ([]*File, []string, error) {
	var out []*File
	var warnings []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, nil, fmt.Errorf("agents: %w", err)
		}
		realDir, err := workspace.Resolve("/", dir)
		if err != nil {
			return nil, nil, fmt.Errorf("agents: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			rel := path
			if root != "" {
				if r, err := filepath.Rel(root, path); err == nil {
					rel = r
				}
			}
			if real, err := workspace.Resolve("/", path); err != nil || !workspace.Within(realDir, real) {
				warnings = append(warnings, fmt.Sprintf("%s: leads outside %s; not read", rel, dir))
				continue
			}
			a, err := Parse(path, rel)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, a)
		}
	}
	return out, warnings, nil
}

// UserFiles parses the agent files of the user's folders. Nothing
// here is fatal: a folder that cannot be read or a file that does not
// parse is a warning and is left out.
func UserFiles(dirs []string) ([]*File, []string) {
	var out []*File
	var warnings []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !os.IsNotExist(err) {
				warnings = append(warnings, fmt.Sprintf("agents: %v", err))
			}
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			a, err := Parse(path, path)
			if err != nil {
				warnings = append(warnings, err.Error()+"; left out")
				continue
			}
			a.User = true
			out = append(out, a)
		}
	}
	return out, warnings
}

// reToolSpec is a Claude Code tool with a rule: Bash(git diff:*).
// Compiled on first use: every odin process initialises this package,
// few read Claude Code agent files.
var reToolSpec = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([A-Za-z]+)\((.*)\)\s*$`) })

// toolSpecs splits Claude Code's tool specs off a tools list: Bash(...)
// becomes ExecuteCommand restricted to the pattern; a spec of another tool
// (Read(./docs/**), WebFetch(domain:x)) keeps the tool, whose own rules
// then apply. A bare Bash beside Bash(...) lifts the restriction.
func toolSpecs(in []string) (tools, patterns []string) {
	bare := false
	for _, t := range in {
		m := reToolSpec().FindStringSubmatch(t)
		switch {
		case m == nil:
			if t == "Bash" || t == "bash" {
				bare = true
			}
			tools = append(tools, t)
		case m[1] == "Bash":
			tools = append(tools, "Bash")
			if p := strings.TrimSpace(m[2]); p != "" && p != "*" {
				patterns = append(patterns, compat.BashPattern(p))
			} else {
				bare = true
			}
		default:
			tools = append(tools, m[1])
		}
	}
	if bare {
		patterns = nil
	}
	return tools, patterns
}

func mapTools(in []string) []string {
	out := make([]string, 0, len(in))
	for _, t := range in {
		if m, ok := foreignTools[t]; ok {
			t = m
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

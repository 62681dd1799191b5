package term

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/messages"
)

// Command is a slash command the caller adds to the REPL (the REPL itself
// provides /help, /mode, /queue, /cost, /clear and /quit). Run is called
// off the UI loop, so it may block; ctx ends when the REPL exits.
type Command struct {
	// Name without the slash ("undo").
	Name string
	// Usage is shown by /help ("/resume [ID]"); Name when empty.
	Usage       string
	Description string
	// Idle commands are refused while a turn runs or is queued, because
	// they change the conversation or the files under it.
	Idle bool
	Run  func(ctx context.Context, args string) (Result, error)
}

// Result is what a command did.
type Result struct {
	// Text is printed above the prompt (Markdown, rendered like answers).
	Text string
	// Listing is aligned plain text (runs, sessions, agents) printed after
	// Text as it is: never wrapped, a line wider than the terminal is cut
	// with an ellipsis, so its columns stay aligned.
	Listing string
	// Session, when set, replaces the REPL's session (/resume, /clear):
	// the REPL closes the old one.
	Session Session
	// Prompt, when set, is submitted as user input in the current mode.
	Prompt string
	// Quit ends the REPL once Text is printed (odin attach's /detach).
	Quit bool
}

// CustomCommand is a prompt template from a Markdown file in a commands
// directory (.odin/commands/NAME.md, Claude Code's format): optional YAML
// front matter with description and argument-hint, then the prompt, in
// which $ARGUMENTS is replaced by the rest of the command line and $1..$9
// by its words. A file in a subdirectory is named dir:name.
type CustomCommand struct {
	Name         string
	Description  string
	ArgumentHint string
	// Mode, when set in the front matter, runs the prompt in that mode
	// (an Odin addition: a review command can run in ask mode).
	Mode messages.Mode
	Body string
	Path string
	// AllowedTools is the front matter's allowed-tools (Claude Code's
	// "Bash(git status:*), Read"): the !`command` lines may run what its
	// Bash(...) rules allow without asking.
	AllowedTools []string
	// Shell runs one !`command` line and returns what replaces it; it is
	// set by the front end that loads the command (Options.RunShell), nil
	// when there is none.
	Shell func(command string) string
}

type frontMatter struct {
	Description  string       `yaml:"description"`
	ArgumentHint argumentHint `yaml:"argument-hint"`
	Mode         string       `yaml:"mode"`
	AllowedTools toolNames    `yaml:"allowed-tools"`
}

// quoteHintLine quotes the value of the front matter's argument-hint line
// when it starts with "[", so "[pr] [priority]" reads as text.
func quoteHintLine(head string) string {
	lines := strings.Split(head, "\n")
	for i, l := range lines {
		v, ok := strings.CutPrefix(l, "argument-hint:")
		if v = strings.TrimSpace(v); ok && strings.HasPrefix(v, "[") {
			lines[i] = "argument-hint: '" + strings.ReplaceAll(v, "'", "''") + "'"
		}
	}
	return strings.Join(lines, "\n")
}

// toolNames is a list of tool rules, as a YAML list or a comma-separated
// string ("Bash(git add:*), Bash(git status:*)").
type toolNames []string

func (t *toolNames) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		depth, start := 0, 0
		v := n.Value
		for i := 0; i <= len(v); i++ {
			if i < len(v) && v[i] == '(' {
				depth++
			} else if i < len(v) && v[i] == ')' {
				depth--
			} else if i == len(v) || (v[i] == ',' && depth == 0) {
				if p := strings.TrimSpace(v[start:i]); p != "" {
					*t = append(*t, p)
				}
				start = i + 1
			}
		}
		return nil
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		*t = l
		return nil
	}
	return fmt.Errorf("line %d: allowed-tools: want a list of tools", n.Line)
}

// argumentHint is a command's argument-hint: a string ("<file> [flags]")
// or, as Claude Code documents it, a YAML list ([issue-number] is the
// list of one word), shown as "[issue-number]".
type argumentHint string

func (h *argumentHint) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*h = argumentHint(n.Value)
		return nil
	case yaml.SequenceNode:
		var parts []string
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: argument-hint: want words or a list of words", item.Line)
			}
			parts = append(parts, "["+item.Value+"]")
		}
		*h = argumentHint(strings.Join(parts, " "))
		return nil
	}
	return fmt.Errorf("line %d: argument-hint: want words or a list of words", n.Line)
}

var reCommandName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`) })

// LoadCustomCommands reads the *.md files under dirs, in priority order:
// a name found in an earlier directory hides the same name in later ones.
// Missing directories are skipped. A file that cannot be read or parsed, or
// that is a symlink leading out of its directory, is reported in the errors
// and skipped; the others still load.
func LoadCustomCommands(dirs ...string) ([]CustomCommand, []error) {
	seen := map[string]bool{}
	var out []CustomCommand
	var errs []error
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		var found []CustomCommand
		realDir, err := workspace.Resolve("/", dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("custom commands %s: %w", dir, err))
			continue
		}
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && path == dir {
					return fs.SkipDir
				}
				errs = append(errs, err)
				return nil
			}
			if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
				return nil
			}
			rel, _ := filepath.Rel(dir, path)
			name := strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), ".md"), "/", ":")
			if !reCommandName().MatchString(name) {
				errs = append(errs, fmt.Errorf("custom command %s: %q is not a valid command name", path, name))
				return nil
			}
			// The same resolver as ReadFile: a command file that is a link
			// leading out of its directory is not read.
			if real, err := workspace.Resolve("/", path); err != nil || !workspace.Within(realDir, real) {
				errs = append(errs, fmt.Errorf("custom command %s: leads outside %s; not read", path, dir))
				return nil
			}
			c, err := parseCustomCommand(path, name)
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			found = append(found, c)
			return nil
		})
		if err != nil && !errors.Is(err, fs.SkipDir) {
			errs = append(errs, err)
		}
		for _, c := range found {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errs
}

func parseCustomCommand(path, name string) (CustomCommand, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return CustomCommand{}, fmt.Errorf("custom command %s: %w", path, err)
	}
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	c := CustomCommand{Name: name, Path: path}
	body := string(data)
	if rest, ok := strings.CutPrefix(body, "---\n"); ok {
		head, tail, found := strings.Cut(rest, "\n---\n")
		if !found {
			if h, ok := strings.CutSuffix(rest, "\n---"); ok {
				head, tail, found = h, "", true
			}
		}
		if !found {
			return c, fmt.Errorf("custom command %s: front matter has no closing ---", path)
		}
		var fm frontMatter
		if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
			// Claude Code's documented "argument-hint: [pr] [priority]" is
			// not YAML (a list followed by more text); Claude reads the
			// line as text, and so does Odin.
			fm = frontMatter{}
			if err2 := yaml.Unmarshal([]byte(quoteHintLine(head)), &fm); err2 != nil {
				// The front matter starts on the file's second line.
				p := config.YAMLErrors([]byte(head), err)[0]
				where := path
				if p.Line > 0 {
					where += ":" + strconv.Itoa(p.Line+1)
				}
				return c, fmt.Errorf("custom command %s: front matter: %s", where, strings.TrimPrefix(p.Msg, "yaml: "))
			}
		}
		if fm.Mode != "" {
			m, err := messages.ParseMode(fm.Mode)
			if err != nil {
				return c, fmt.Errorf("custom command %s: front matter: %w", path, err)
			}
			c.Mode = m
		}
		c.Description, c.ArgumentHint = strings.TrimSpace(fm.Description), strings.TrimSpace(string(fm.ArgumentHint))
		c.AllowedTools = fm.AllowedTools
		body = tail
	}
	c.Body = strings.TrimSpace(body)
	if c.Body == "" {
		return c, fmt.Errorf("custom command %s: the prompt is empty", path)
	}
	if c.Description == "" {
		c.Description = firstLine(c.Body)
	}
	return c, nil
}

// needsTrust reports whether a project command's mode could loosen the
// session's: any mode but ask (the most restrictive) may.
func (c CustomCommand) needsTrust() bool {
	return (c.Mode != "" && c.Mode != messages.ModeAsk) || len(c.ShellLines()) > 0
}

var reShell = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("!`([^`\n]+)`") })

// ShellLines lists the commands of the body's !`command` lines, which
// run when the command is used and whose output replaces them.
func (c CustomCommand) ShellLines() []string {
	var out []string
	for _, m := range reShell().FindAllStringSubmatch(c.Body, -1) {
		out = append(out, m[1])
	}
	return out
}

// CommandTrustItems lists the custom commands under the project's dirs
// whose front matter sets a mode other than ask: an ask session would run
// them in that mode, so they wait for `odin trust`. Keys are paths
// relative to root. Files that do not parse are left to the REPL to report.
func CommandTrustItems(root string, dirs ...string) []config.TrustItem {
	cmds, _ := LoadCustomCommands(dirs...)
	var items []config.TrustItem
	for _, c := range cmds {
		if !c.needsTrust() {
			continue
		}
		rel, err := filepath.Rel(root, c.Path)
		if err != nil {
			rel = c.Path
		}
		if c.Mode != "" && c.Mode != messages.ModeAsk {
			items = append(items, config.TrustItem{Key: rel + " mode", Value: string(c.Mode),
				Note: "/" + c.Name + " runs in " + string(c.Mode) + " mode whatever the session's mode", Digest: digest(c.Body)})
		}
		if lines := c.ShellLines(); len(lines) > 0 {
			items = append(items, config.TrustItem{Key: rel + " commands", Value: strings.Join(lines, "; "),
				Note: "/" + c.Name + " runs these commands when used", Digest: digest(c.Body)})
		}
	}
	return items
}

// customCommands loads the REPL's custom commands: every front end goes
// through it, so an untrusted project's modes are dropped everywhere.
func (o Options) customCommands() ([]CustomCommand, []error) {
	cmds, errs := LoadCustomCommands(o.CommandDirs...)
	return WithShell(IgnoreUntrustedModes(cmds, o.UntrustedCommandDirs), o.UntrustedCommandDirs, o.RunShell), errs
}

// WithShell gives each command its Shell: run (with the command's
// allowed-tools) for the user's and trusted commands, a refusal naming
// `odin trust` for those of the untrusted dirs. A nil run leaves Shell
// nil.
func WithShell(cmds []CustomCommand, untrusted []string, run func(command string, allowed []string) string) []CustomCommand {
	out := slices.Clone(cmds)
	for i, c := range out {
		if len(c.ShellLines()) == 0 || run == nil {
			continue
		}
		isUntrusted := slices.ContainsFunc(untrusted, func(d string) bool {
			return d != "" && workspace.Within(filepath.Clean(d), filepath.Clean(c.Path))
		})
		if isUntrusted {
			out[i].Shell = func(command string) string {
				return "(not run: `" + command + "` comes from a project command; run `odin trust` to let it run)"
			}
			continue
		}
		allowed := c.AllowedTools
		out[i].Shell = func(command string) string { return run(command, allowed) }
	}
	return out
}

// IgnoreUntrustedModes clears the mode of the commands loaded from dirs
// (an untrusted project's), so they run in the session's mode.
func IgnoreUntrustedModes(cmds []CustomCommand, dirs []string) []CustomCommand {
	out := slices.Clone(cmds)
	for i, c := range out {
		for _, d := range dirs {
			if d != "" && c.needsTrust() && workspace.Within(filepath.Clean(d), filepath.Clean(c.Path)) {
				out[i].Mode = ""
			}
		}
	}
	return out
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var rePositional = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$([1-9])`) })

// Expand returns the prompt with args substituted. When the template uses
// neither $ARGUMENTS nor $1..$9, non-empty args are appended after a blank
// line, so nothing the user typed is lost.
func (c CustomCommand) Expand(args string) string {
	args = strings.TrimSpace(args)
	used := strings.Contains(c.Body, "$ARGUMENTS") || rePositional().MatchString(c.Body)
	out := strings.ReplaceAll(c.Body, "$ARGUMENTS", args)
	words := strings.Fields(args)
	out = rePositional().ReplaceAllStringFunc(out, func(m string) string {
		i := int(m[1] - '1')
		if i < len(words) {
			return words[i]
		}
		return ""
	})
	if c.Shell != nil {
		out = reShell().ReplaceAllStringFunc(out, func(m string) string {
			return c.Shell(reShell().FindStringSubmatch(m)[1])
		})
	}
	if !used && args != "" {
		out += "\n\n" + args
	}
	return out
}

// splitCommand splits "/name rest" into name and rest; ok is false when
// line is not a slash command ("/" alone, or a path like "/usr/bin" with
// more slashes, is sent as a prompt).
func splitCommand(line string) (name, args string, ok bool) {
	s, found := strings.CutPrefix(strings.TrimLeft(line, " "), "/")
	if !found || s == "" {
		return "", "", false
	}
	name, args, _ = strings.Cut(s, " ")
	if nl := strings.IndexByte(name, '\n'); nl >= 0 {
		name, args = name[:nl], s[nl+1:]
	}
	if strings.Contains(name, "/") || !reCommandName().MatchString(name) {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
}

// firstLine is the first line of s, sanitized for the terminal.
func firstLine(s string) string {
	s = strings.TrimSpace(termsafe.Text(s))
	line, _, _ := strings.Cut(s, "\n")
	return termsafe.Line(line)
}

package compat

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Claude Code's settings files, lowest precedence first: the user's, the
// project's shared one and the project's local one. Claude merges their
// permission lists and lets the more specific file win a scalar; Load
// does the same with the layers.
const (
	ClaudeSettings      = ".claude/settings.json"
	ClaudeLocalSettings = ".claude/settings.local.json"
)

// HookEvents are the hook events Odin runs (config.Config.Hooks).
var HookEvents = []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "SubagentStart", "SubagentStop", "Stop", "PreCompact"}

// claudeSettings is the part of Claude Code's settings file that Odin
// reads; every other key is named in a note.
type claudeSettings struct {
	Permissions struct {
		Allow                 []string `json:"allow"`
		Deny                  []string `json:"deny"`
		Ask                   []string `json:"ask"`
		AdditionalDirectories []string `json:"additionalDirectories"`
		DefaultMode           string   `json:"defaultMode"`
	} `json:"permissions"`
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string  `json:"type"`
			Command string  `json:"command"`
			Timeout float64 `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
	Env   map[string]string `json:"env"`
	Model string            `json:"model"`
}

// claudeKnown are the top-level keys claudeSettings reads.
var claudeKnown = []string{"permissions", "hooks", "env", "model", "$schema"}

func readClaude(o Options, r *Result) {
	if o.Home != "" {
		readClaudeFile(filepath.Join(o.Home, ClaudeSettings), o, false, r)
	}
	if o.Root != "" {
		readClaudeFile(filepath.Join(o.Root, ClaudeSettings), o, true, r)
		readClaudeFile(filepath.Join(o.Root, ClaudeLocalSettings), o, true, r)
	}
}

func readClaudeFile(path string, o Options, project bool, r *Result) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	b := newBuilder(Claude, path, project)
	defer b.finish(r)
	if err != nil {
		b.note("", "cannot read: %v", err)
		return
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		b.jsonNote("invalid JSON", data, err)
		return
	}
	b.data, b.offsets = data, jsonKeyOffsets(data)
	var s claudeSettings
	if err := json.Unmarshal(data, &s); err != nil {
		b.jsonNote("unexpected shape", data, err)
		return
	}
	for _, k := range sortedKeys(raw) {
		if !slices.Contains(claudeKnown, k) {
			b.note(k, "Odin has no equivalent; not applied")
		}
	}
	var rawPerms map[string]json.RawMessage
	_ = json.Unmarshal(raw["permissions"], &rawPerms)
	for _, k := range sortedKeys(rawPerms) {
		if !slices.Contains([]string{"allow", "deny", "ask", "additionalDirectories", "defaultMode"}, k) {
			b.note("permissions."+k, "Odin has no equivalent; not applied")
		}
	}
	settingsDir := filepath.Dir(path)
	for _, rule := range s.Permissions.Allow {
		claudeRule(b, "allow", rule, settingsDir)
	}
	for _, rule := range s.Permissions.Deny {
		claudeRule(b, "deny", rule, settingsDir)
	}
	// Ask beats allow in Claude Code: a command it must ask for is taken
	// off the allow list, and Odin asks for every command not on it.
	for _, rule := range s.Permissions.Ask {
		claudeRule(b, "ask", rule, settingsDir)
	}
	for _, d := range s.Permissions.AdditionalDirectories {
		dir := d
		if !filepath.IsAbs(d) && !strings.HasPrefix(d, "~/") && o.Root != "" {
			// Claude takes a relative directory against where it runs.
			dir = filepath.Join(o.Root, d)
		}
		b.add(dir, "permissions", "additional_dirs")
		b.mapped("additionalDirectories %s → permissions.additional_dirs", quote(d))
	}
	switch m := s.Permissions.DefaultMode; m {
	case "":
	case "plan":
		b.set("plan", "mode")
		b.mapped("defaultMode plan → mode: plan")
	case "acceptEdits":
		b.set("edit", "mode")
		b.mapped("defaultMode acceptEdits → mode: edit")
	case "default":
		b.note("permissions.defaultMode", `"default" (ask before each edit) has no Odin mode: edit mode edits inside the project without asking, ask mode edits nothing; Odin's mode is left as configured`)
	case "bypassPermissions":
		b.note("permissions.defaultMode", `"bypassPermissions" is not taken from a file; pass --yolo when you mean it`)
	default:
		b.note("permissions.defaultMode", "unknown mode %s; not applied", quote(m))
	}
	claudeHooks(b, s.Hooks)
	if len(s.Env) > 0 {
		b.l.Env = map[string]string{}
		for _, name := range sortedKeys(s.Env) {
			if reason := envRefused(name); reason != "" {
				b.note("env."+name, "not applied: %s", reason)
				continue
			}
			b.l.Env[name] = s.Env[name]
			b.add(name, "permissions", "env")
			b.mapped("env %s → set for Odin and passed to commands (permissions.env)", name)
		}
	}
	if m := s.Model; m != "" {
		if claudeAlias(m) {
			b.note("model", "%s is a Claude Code alias, not a model id; set models.main to the id your provider serves", quote(m))
		} else {
			b.set(m, "models", "main")
			b.mapped("model %s → models.main", quote(m))
		}
	}
}

// claudeAlias reports whether m is one of Claude Code's model aliases,
// which no OpenAI-compatible endpoint knows.
func claudeAlias(m string) bool {
	base, _, _ := strings.Cut(m, "[")
	return slices.Contains([]string{"default", "opus", "sonnet", "haiku", "opusplan", "sonnet[1m]"}, strings.ToLower(base))
}

// envRefused says why a settings file may not set the variable name: the
// ones that decide which programs Odin itself runs, where it sends the
// conversation or what it trusts would let a file take Odin over.
func envRefused(name string) string {
	up := strings.ToUpper(name)
	switch {
	case !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(name):
		return "not a variable name"
	case slices.Contains([]string{"PATH", "HOME", "SHELL", "BASH_ENV", "ENV", "IFS", "TMPDIR", "PWD", "USER"}, up):
		return "it decides what Odin itself runs"
	case strings.HasPrefix(up, "LD_") || strings.HasPrefix(up, "DYLD_") || strings.HasPrefix(up, "GIT_") || strings.HasPrefix(up, "XDG_"):
		return "it decides what Odin itself runs"
	case strings.HasPrefix(up, "ODIN_") || strings.HasSuffix(up, "_BASE_URL") || strings.HasSuffix(up, "_PROXY"):
		return "set Odin's own settings in odin.yaml"
	}
	return ""
}

// claudeRule maps one permission rule of list (allow, deny or ask).
func claudeRule(b *builder, list, rule, settingsDir string) {
	key := "permissions." + list
	tool, spec, hasSpec := strings.Cut(rule, "(")
	if hasSpec {
		if !strings.HasSuffix(spec, ")") {
			b.note(key, "%s: not a rule; not applied", quote(rule))
			return
		}
		spec = strings.TrimSuffix(spec, ")")
	}
	tool = strings.TrimSpace(tool)
	switch tool {
	case "Bash":
		pat := "*"
		if hasSpec && spec != "*" && spec != "" {
			pat = BashPattern(spec)
		}
		if !validCommandPattern(pat) {
			b.note(key, "%s: not a command pattern Odin can read; not applied", quote(rule))
			return
		}
		switch list {
		case "allow":
			b.add(pat, "permissions", "allowed_commands")
			b.mapped("allow %s → permissions.allowed_commands %s", rule, quote(pat))
		case "deny":
			b.add(pat, "permissions", "forbidden_commands")
			b.mapped("deny %s → permissions.forbidden_commands %s (beats any allow, --allow included)", rule, quote(pat))
		case "ask":
			b.remove(pat, "permissions", "allowed_commands")
			b.mapped("ask %s → left off permissions.allowed_commands, so Odin asks", rule)
		}
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Grep", "Glob", "LS":
		switch {
		case list == "deny" && tool == "Read" && hasSpec:
			p := ReadPattern(spec, settingsDir)
			b.add(p, "permissions", "deny_read")
			b.mapped("deny %s → permissions.deny_read %s (file tools refuse it, commands do not see it)", rule, quote(p))
		case list == "deny" && tool == "Read":
			b.note(key, "%s: Odin cannot forbid reading altogether; use ask mode or deny_read patterns", quote(rule))
		case list == "allow":
			b.mapped("allow %s → already allowed: Odin reads the project freely and edits it in edit mode", rule)
		case list == "deny":
			b.note(key, "%s: Odin has no edit deny list; its writes stay inside the project and additional_dirs, and .git, Odin's own dirs are protected. Not applied", quote(rule))
		default:
			b.note(key, "%s: Odin does not ask per file; not applied", quote(rule))
		}
	case "WebFetch", "WebSearch":
		if list == "allow" {
			b.mapped("allow %s → already allowed: Odin's %s takes public hosts", rule, tool)
			return
		}
		if d, ok := strings.CutPrefix(strings.TrimSpace(spec), "domain:"); ok && tool == "WebFetch" && list == "deny" && d != "" && !strings.ContainsAny(d, "/: ") {
			b.add(d, "web", "deny_hosts")
			b.mapped("deny %s → web.deny_hosts %s (WebFetch and the browser refuse it and its subdomains)", rule, quote(d))
			return
		}
		b.note(key, "%s: Odin has no per-domain %s rule (web.allow_hosts only widens to private hosts); not applied", quote(rule), tool)
	default:
		if strings.HasPrefix(tool, "mcp__") {
			if list != "deny" {
				b.note(key, "%s: Odin asks or allows MCP tools by the session's mode and policy, not per tool; not applied", quote(rule))
				return
			}
			// mcp__server alone is every tool of the server.
			pat := tool
			if !strings.Contains(strings.TrimPrefix(tool, "mcp__"), "__") {
				pat += "__*"
			}
			if _, err := path.Match(pat, ""); err != nil {
				b.note(key, "%s: not a tool name Odin can read; not applied", quote(rule))
				return
			}
			b.add(pat, "mcp", "deny_tools")
			b.mapped("deny %s → mcp.deny_tools %s (never offered to any agent)", rule, quote(pat))
			return
		}
		b.note(key, "%s: unknown tool; not applied", quote(rule))
	}
}

// BashPattern turns the inside of a Claude Code Bash(...) rule into an
// Odin command pattern: "npm run test:*" (Claude's prefix form) becomes
// "npm run test *", which matches the command alone and with any
// arguments, as Claude's does; "git diff *" stays as it is.
func BashPattern(spec string) string {
	spec = strings.TrimSpace(spec)
	if p, ok := strings.CutSuffix(spec, ":*"); ok {
		return strings.TrimSpace(p) + " *"
	}
	return spec
}

// ReadPattern turns the path of a Claude Code Read(...) rule (gitignore
// syntax: "//x" absolute, "~/x" in the home, "/x" relative to the
// settings file's project, "./x" or "x" from the working directory) into
// a permissions.deny_read pattern.
func ReadPattern(spec, settingsDir string) string {
	spec = strings.TrimSpace(spec)
	switch {
	case strings.HasPrefix(spec, "//"):
		return spec[1:]
	case strings.HasPrefix(spec, "~/"), strings.HasPrefix(spec, "./"):
		return spec
	case strings.HasPrefix(spec, "/"):
		// Relative to the settings file: for a project's .claude/ that is
		// the project root.
		if filepath.Base(settingsDir) == ".claude" {
			return "." + spec
		}
		return filepath.Join(settingsDir, spec)
	}
	return spec
}

// claudeHooks maps Claude Code's hook groups onto Odin's hooks: the same
// events and the same exit-code contract; matchers name Claude's tools,
// which become Odin's.
func claudeHooks(b *builder, hooks map[string][]struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type    string  `json:"type"`
		Command string  `json:"command"`
		Timeout float64 `json:"timeout"`
	} `json:"hooks"`
}) {
	for _, event := range sortedKeys(hooks) {
		if !slices.Contains(HookEvents, event) {
			b.note("hooks."+event, "Odin has no such event (it has %s); not applied", strings.Join(HookEvents, ", "))
			continue
		}
		for _, group := range hooks[event] {
			matcher, dropped := ClaudeMatcher(group.Matcher, event == "PreToolUse" || event == "PostToolUse")
			for _, d := range dropped {
				b.note("hooks."+event, "matcher %s: %s", quote(group.Matcher), d)
			}
			if matcher == "" && len(dropped) > 0 {
				// None of its tools exists here; without a matcher the
				// hook would run for every tool.
				continue
			}
			for _, h := range group.Hooks {
				if h.Type != "" && h.Type != "command" {
					b.note("hooks."+event, "hook type %s: Odin runs command hooks only; not applied", quote(h.Type))
					continue
				}
				if strings.TrimSpace(h.Command) == "" {
					continue
				}
				entry := map[string]any{"command": h.Command}
				if matcher != "" {
					entry["matcher"] = matcher
				}
				if h.Timeout > 0 {
					entry["timeout"] = strconv.FormatFloat(h.Timeout, 'f', -1, 64) + "s"
				}
				hooksList, _ := hooksOf(b)[event].([]any)
				hooksOf(b)[event] = append(hooksList, entry)
				b.mapped("hooks.%s %s → hooks.%s", event, quote(h.Command), event)
			}
		}
	}
}

func hooksOf(b *builder) map[string]any {
	h, ok := b.l.Tree["hooks"].(map[string]any)
	if !ok {
		h = map[string]any{}
		b.l.Tree["hooks"] = h
	}
	return h
}

// ClaudeMatcher turns a Claude Code matcher (a regular expression over
// Claude's tool names) into Odin's ("|"-separated exact names). What Odin
// cannot express comes back in dropped.
func ClaudeMatcher(m string, tools bool) (string, []string) {
	m = strings.TrimSpace(m)
	if m == "" || m == "*" || m == ".*" {
		return "", nil
	}
	var keep, dropped []string
	for _, alt := range strings.Split(m, "|") {
		alt = strings.TrimSpace(alt)
		o, known := claudeTools[alt]
		switch {
		case alt == "":
		case strings.ContainsAny(alt, `.*+?[](){}^$\`):
			dropped = append(dropped, quote(alt)+" is a pattern; Odin matches exact names")
		case tools && known && o == "":
			dropped = append(dropped, quote(alt)+": Odin has no such tool")
		case tools && known:
			keep = append(keep, o)
		default:
			keep = append(keep, alt)
		}
	}
	return strings.Join(keep, "|"), dropped
}

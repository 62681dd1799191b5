package readdeny

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/odin-code/odin/internal/workspace"
)

// Source says where a pattern comes from.
type Source string

// Pattern sources, in the order their patterns apply.
const (
	SourceDefault Source = "default"
	SourceUser    Source = "user"
	SourceProject Source = "project"
)

// Rule is one pattern of the list as written, with its source.
type Rule struct {
	Pattern string
	Source  Source
}

// String is the rule as tool errors and `odin doctor` name it:
// `~/.ssh (default)`.
func (r Rule) String() string { return fmt.Sprintf("%s (%s)", r.Pattern, r.Source) }

// defaults are the credential stores of common tools, shell and REPL
// histories (which hold pasted tokens), and the project's .env files. The
// .env templates that projects commit for others to copy stay readable.
var defaults = []string{
	"~/.ssh",
	"~/.aws",
	"~/.azure",
	"~/.config/gcloud",
	"~/.config/gh",
	"~/.netrc",
	"~/.git-credentials",
	"~/.config/git/credentials",
	"~/.docker/config.json",
	"~/.kube",
	"~/.gnupg",
	"~/.npmrc",
	"~/.pypirc",
	"~/.cargo/credentials*",
	"~/.claude/.credentials.json",
	// Claude Code's user file holds its MCP servers' env (tokens) and
	// account; the others are tokens of CLIs a developer logs into.
	"~/.claude.json",
	"~/.vault-token",
	"~/.pgpass",
	"~/.my.cnf",
	"~/.terraform.d/credentials.tfrc.json",
	"~/.config/hub",
	"~/.config/glab-cli",
	"~/.gem/credentials",
	// Browsers' profiles: their cookies are the sessions of every site
	// the user is logged into (Chromium's are readable without a
	// keyring), their saved passwords too.
	"~/.mozilla",
	"~/.config/google-chrome",
	"~/.config/chromium",
	"~/.config/BraveSoftware",
	"~/.config/microsoft-edge",
	"~/.bash_history",
	"~/.zsh_history",
	"~/.local/share/fish/fish_history",
	"~/.psql_history",
	"~/.mysql_history",
	"~/.python_history",
	"~/.node_repl_history",
	".env",
	".env.*",
	"!.env.example",
	"!.env.sample",
	"!.env.template",
}

// Options are the inputs of New. Home and Root should be absolute; an
// empty Home drops the "~/" patterns, an empty Root the project ones.
type Options struct {
	Home string
	Root string
	// Private are absolute paths of Odin's own secrets (the serve token):
	// denied like the defaults, and listed with them.
	Private []string
	// User are the user's patterns (permissions.deny_read of the user
	// config, the environment and flags), "!" patterns included.
	User []string
	// Project are the project's additions; "!" patterns among them are
	// dropped.
	Project []string
	// SkipDirs are directories the project walk of Existing does not
	// enter: Odin's own state and config directories when they lie in
	// the project (the build caches there hold no project secrets and
	// change with every build).
	SkipDirs []string
}

// Rules is a compiled read deny list. The zero value and nil deny nothing.
type Rules struct {
	rules   []rule
	dropped []string
	home    string
	root    string
	// rootRules says whether any pattern is anchored at the root: only
	// then does Existing walk the project.
	rootRules bool
	cache     *treeCache
	skip      map[string]bool
}

type rule struct {
	Rule
	negate bool
	base   string // the absolute directory the pattern is relative to
	tree   bool   // relative to the project root: found by walking it
	file   *workspace.IgnoreFile
	// Cheap tests before the glob (the walks ask about every entry):
	// prefix is what every path the rule matches starts with; name, when
	// set, is a pattern without a slash, matched against the base name
	// alone, as gitignore reads it.
	prefix  string
	name    *workspace.Glob
	dirOnly bool
}

// New compiles the list. A malformed pattern is an error naming it and
// its source; nothing is half-built.
func New(opts Options) (*Rules, error) {
	r := &Rules{home: resolveDir(opts.Home), root: resolveDir(opts.Root)}
	add := func(src Source, pats []string) error {
		for _, p := range pats {
			if err := r.add(src, p); err != nil {
				return fmt.Errorf("permissions.deny_read: %s pattern %q: %w", src, p, err)
			}
		}
		return nil
	}
	private := make([]string, 0, len(opts.Private))
	for _, p := range opts.Private {
		if filepath.IsAbs(p) {
			private = append(private, escapeGlob(filepath.Clean(p)))
		}
	}
	for _, step := range []struct {
		src  Source
		pats []string
	}{{SourceDefault, defaults}, {SourceDefault, private}, {SourceUser, opts.User}, {SourceProject, opts.Project}} {
		if err := add(step.src, step.pats); err != nil {
			return nil, err
		}
	}
	r.cache = newTreeCache()
	r.skip = map[string]bool{}
	for _, d := range opts.SkipDirs {
		if d = resolveDir(d); d != "" {
			r.skip[d] = true
		}
	}
	return r, nil
}

// resolveDir resolves the symlinks of an existing directory, so that
// patterns anchored there match the resolved paths tools check.
func resolveDir(d string) string {
	if d == "" || !filepath.IsAbs(d) {
		return ""
	}
	if real, err := filepath.EvalSymlinks(d); err == nil {
		return real
	}
	return filepath.Clean(d)
}

func (r *Rules) add(src Source, text string) error {
	p := strings.TrimSpace(text)
	if p == "" || strings.HasPrefix(p, "#") {
		return nil
	}
	rl := rule{Rule: Rule{Pattern: p, Source: src}}
	if strings.HasPrefix(p, "!") {
		if src == SourceProject {
			r.dropped = append(r.dropped, p)
			return nil
		}
		rl.negate = true
		p = p[1:]
	}
	// "x/**" denies everything beneath x: hiding x as a whole says the same
	// and lets the sandbox cover it with one mount.
	if strings.HasSuffix(p, "/**") && len(p) > 3 {
		p = strings.TrimSuffix(p, "**")
	}
	var line string
	switch {
	case p == "~" || p == "~/":
		return fmt.Errorf("the whole home directory cannot be denied")
	case strings.HasPrefix(p, "~/"):
		if r.home == "" {
			return nil // no home directory: nothing to match
		}
		rl.base, line = r.home, "/"+p[2:]
	case strings.HasPrefix(p, "~"):
		return fmt.Errorf("only ~/ is expanded (not ~user)")
	case strings.HasPrefix(p, "/"):
		if strings.Trim(p, "/") == "" {
			return fmt.Errorf("the whole file system cannot be denied")
		}
		rl.base, line = "/", p
	case strings.HasPrefix(p, "../") || p == "..":
		return fmt.Errorf("a project pattern cannot leave the project; use an absolute or ~/ path")
	default:
		if r.root == "" {
			return nil
		}
		rl.base = r.root
		if rest, ok := strings.CutPrefix(p, "./"); ok {
			line = "/" + rest
		} else {
			line = p
		}
		rl.tree, r.rootRules = true, true
	}
	if strings.Trim(line, "/*") == "" {
		return fmt.Errorf("a pattern must name something inside its directory")
	}
	if strings.HasPrefix(line, "!") || strings.HasPrefix(line, "#") {
		line = `\` + line
	}
	f := &workspace.IgnoreFile{Dir: rl.base}
	err := f.AddLine(line)
	if err != nil {
		return err
	}
	rl.file = f
	body := strings.TrimSuffix(line, "/")
	rl.dirOnly = body != line
	if !strings.Contains(body, "/") {
		// Unanchored: any depth, so the base name decides.
		if rl.name, err = workspace.CompileGlob(body); err != nil {
			return err
		}
		rl.prefix = strings.TrimSuffix(rl.base, "/") + "/"
	} else {
		lit := strings.TrimPrefix(body, "/")
		if i := strings.IndexAny(lit, `*?[{\`); i >= 0 {
			lit = lit[:i]
		}
		rl.prefix = strings.TrimSuffix(rl.base, "/") + "/" + lit
	}
	r.rules = append(r.rules, rl)
	return nil
}

// escapeGlob quotes the glob characters of a literal path.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`\*?[]{}!#`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// List returns the patterns in force, in the order they apply.
func (r *Rules) List() []Rule {
	if r == nil {
		return nil
	}
	out := make([]Rule, len(r.rules))
	for i, rl := range r.rules {
		out[i] = rl.Rule
	}
	return out
}

// Dropped lists the project's "!" patterns, which were ignored.
func (r *Rules) Dropped() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.dropped...)
}

// Match reports the rule that denies reading path, if any: path (absolute)
// is tested as given and with its symlinks resolved, with every directory
// above it, so a link inside the project that leads to ~/.ssh/id_rsa is
// denied, and so is a file beneath a denied directory. A path that does
// not exist yet is tested as a file.
func (r *Rules) Match(path string) (Rule, bool) {
	if r == nil || len(r.rules) == 0 || !filepath.IsAbs(path) {
		return Rule{}, false
	}
	lexical := filepath.Clean(path)
	resolved, err := workspace.Resolve("/", lexical)
	if err != nil {
		resolved = lexical
	}
	isDir := false
	if fi, err := os.Stat(resolved); err == nil {
		isDir = fi.IsDir()
	}
	if rl, ok := r.denied(resolved, isDir); ok {
		return rl.Rule, true
	}
	if lexical != resolved {
		if rl, ok := r.denied(lexical, isDir); ok {
			return rl.Rule, true
		}
	}
	return Rule{}, false
}

// Check is Match for the tools' contract (tool.ReadDeny): the rule as
// text.
func (r *Rules) Check(path string) (string, bool) {
	rl, ok := r.Match(path)
	if !ok {
		return "", false
	}
	return rl.String(), true
}

// Hides reports whether a walk should leave out the entry at path (clean,
// absolute) of type typ, the walk having admitted its parent directory
// already: only the entry itself is tested, except a symlink, which is
// resolved and tested in full.
func (r *Rules) Hides(path string, typ fs.FileMode) bool {
	if r == nil || len(r.rules) == 0 {
		return false
	}
	if typ&fs.ModeSymlink != 0 {
		_, ok := r.Match(path)
		return ok
	}
	rl := r.decide(path, typ.IsDir())
	return rl != nil && !rl.negate
}

// denied tests p (clean, absolute, not resolved further) and each
// directory above it, top down: a denied directory hides all beneath it.
func (r *Rules) denied(p string, isDir bool) (*rule, bool) {
	start := 1
	for start <= len(p) {
		j := strings.IndexByte(p[start:], '/')
		last := j < 0
		prefix := p
		if !last {
			prefix = p[:start+j]
		}
		if rl := r.decide(prefix, isDir || !last); rl != nil && !rl.negate {
			return rl, true
		}
		if last {
			break
		}
		start += j + 1
	}
	return nil, false
}

// decide returns the last rule matching p itself, nil when none does.
func (r *Rules) decide(p string, isDir bool) *rule {
	for i := len(r.rules) - 1; i >= 0; i-- {
		rl := &r.rules[i]
		if !strings.HasPrefix(p, rl.prefix) || len(p) == len(rl.base) || (rl.dirOnly && !isDir) {
			continue
		}
		if rl.name != nil {
			if rl.name.Match(p[strings.LastIndexByte(p, '/')+1:]) {
				return rl
			}
			continue
		}
		rel, ok := relTo(rl.base, p)
		if !ok {
			continue
		}
		if rl.file.Match(rel, isDir) != workspace.MatchNone {
			return rl
		}
	}
	return nil
}

// relTo is p relative to base, slash-separated; false when p is not
// strictly beneath base.
func relTo(base, p string) (string, bool) {
	if base == "/" {
		return p[1:], len(p) > 1
	}
	if len(p) <= len(base) || p[len(base)] != '/' || p[:len(base)] != base {
		return "", false
	}
	return p[len(base)+1:], true
}

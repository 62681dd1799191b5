package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// A sandboxed command may write the project, but the project's .git is
// not project content: git runs programs named in a repository's config
// (core.fsmonitor, core.hooksPath, filter drivers, textconv, pagers,
// credential helpers...) and its hooks, outside any sandbox, whenever the
// user — or the shell prompt that shows the branch — runs git there. An
// existing .git is bound read-only, but a writable directory without one
// could get one planted, and the user's next `git status` would run what
// the command put in it. So a .git that a write-mode command created at
// the top of a writable directory is checked when the command ends: what
// `git init` makes (a config of the [core] keys it writes, sample hooks)
// stays, anything else is removed and reported.
//
// The same holds deeper: git looks for a repository in the directory it
// runs in before its parents, so a .git planted in src/ — or src/ itself
// laid out as a bare repository (HEAD, objects/, refs/ and a config,
// which git accepts by default) — is what the user's git obeys in src/,
// whatever the project's own .git says. The directories beneath the
// writable ones are walked before and after each write-mode command (a
// cached walk that lists again only the directories whose mtime moved,
// so it costs one lstat per directory); a git directory that appeared
// meanwhile is checked like a top-level one, with the settings a clone
// writes (remote URLs, branch tracking) allowed too. An unsafe nested
// .git is removed; of an unsafe bare layout only its HEAD, which makes
// git take the directory for a repository, is removed, since the
// directory holds whatever else the command or the user put there.
//
// The git directories nested in the tree before a command are kept
// read-only for it, like the root's .git (Plan.Repos).
//
// Known limit: the walk stops after maxRepoWalk directories.

// gitGuard remembers the writable directories that had no .git before a
// command, and the git directories beneath them.
type gitGuard struct {
	mu      sync.Mutex // sweepNow against Release's sweep
	missing []string   // DIR/.git paths that did not exist
	roots   []string
	tree    *gitTree
	before  map[string]bool // nested git directories before the command
}

// newGitGuard starts guarding writable; before are the git directories
// nested in them now (Plan's walk).
func newGitGuard(writable []string, tree *gitTree, before []string) *gitGuard {
	g := &gitGuard{roots: writable, tree: tree}
	for _, w := range writable {
		p := filepath.Join(w, ".git")
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			g.missing = append(g.missing, p)
		}
	}
	if tree != nil {
		g.before = map[string]bool{}
		for _, r := range before {
			g.before[r] = true
		}
	}
	return g
}

// sweep removes each .git created since newGitGuard that is not a plain
// `git init` repository, and each git directory planted deeper that could
// make git run a program, and says what it removed and why.
func (g *gitGuard) sweep() []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, p := range g.missing {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		why := unsafeGitDir(p, false)
		if why == "" {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			out = append(out, fmt.Sprintf("%s (%s) could not be removed: %v — do not run git there before checking it", p, why, err))
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s)", p, why))
	}
	if g.tree == nil {
		return out
	}
	for _, r := range g.tree.scan(g.roots) {
		if g.before[r] {
			continue
		}
		why := unsafeGitDir(r, true)
		if why == "" {
			continue
		}
		// A planted .git goes whole; a directory laid out as a bare
		// repository stops being one without its HEAD.
		victim := r
		if filepath.Base(r) != ".git" {
			victim = filepath.Join(r, "HEAD")
		}
		if err := os.RemoveAll(victim); err != nil {
			out = append(out, fmt.Sprintf("%s (%s) could not be removed: %v — do not run git there before checking it", victim, why, err))
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s)", victim, why))
	}
	return out
}

// sweepNow is sweep for a process that may still run. What it keeps (a
// plain git init) stays under watch: the process may change it later,
// and every later sweep checks it again.
func (g *gitGuard) sweepNow() []string {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sweep()
}

// maxRepoWalk bounds the walk for nested git directories, as the read deny
// list's walk is bounded.
const maxRepoWalk = 50000

// gitTree caches the directories beneath the writable ones with their
// mtimes and the git directories in them; safe for concurrent use.
type gitTree struct {
	mu   sync.Mutex
	dirs map[string]*gitTreeDir
	gen  uint64
}

type gitTreeDir struct {
	mtime   time.Time
	racy    bool // listed so soon after a change that another could share its mtime
	subdirs []string
	repos   []string
	seen    uint64
}

// scan returns the git directories beneath roots — DIR/.git (a directory
// or a file) of every directory below a root, and every directory laid
// out as a bare repository, roots included — listing again only the
// directories whose mtime moved. It does not enter .git directories or
// follow symlinks.
func (t *gitTree) scan(roots []string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dirs == nil {
		t.dirs = map[string]*gitTreeDir{}
	}
	t.gen++
	var out []string
	visited := 0
	stack := slices.Clone(roots)
	for len(stack) > 0 && visited < maxRepoWalk {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		visited++
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		st := t.dirs[dir]
		if st == nil || st.racy || !fi.ModTime().Equal(st.mtime) {
			st = listRepoDir(dir, fi.ModTime(), slices.Contains(roots, dir))
			t.dirs[dir] = st
		}
		st.seen = t.gen
		out = append(out, st.repos...)
		stack = append(stack, st.subdirs...)
	}
	for d, st := range t.dirs {
		if st.seen != t.gen {
			delete(t.dirs, d)
		}
	}
	return out
}

// racyWindow is how recent a directory's mtime may be for a later change
// to leave it unchanged (coarse file system timestamps).
const racyWindow = 2 * time.Second

func listRepoDir(dir string, mtime time.Time, root bool) *gitTreeDir {
	st := &gitTreeDir{mtime: mtime, racy: time.Since(mtime) < racyWindow}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return st
	}
	var head, objects, refs bool
	for _, e := range ents {
		switch name := e.Name(); {
		case name == ".git":
			// A root's own .git is protected, or checked as missing.
			if !root {
				st.repos = append(st.repos, filepath.Join(dir, name))
			}
		case name == "HEAD":
			head = e.Type().IsRegular()
		case name == "objects":
			objects = e.IsDir()
		case name == "refs":
			refs = e.IsDir()
		}
		if e.IsDir() && e.Name() != ".git" {
			st.subdirs = append(st.subdirs, filepath.Join(dir, e.Name()))
		}
	}
	if head && objects && refs {
		st.repos = append(st.repos, dir)
	}
	return st
}

// initCoreKeys are the [core] settings `git init` writes on the platforms
// git supports; none of them names a program.
var initCoreKeys = map[string]bool{
	"repositoryformatversion": true, "filemode": true, "bare": true, "logallrefupdates": true,
	"ignorecase": true, "precomposeunicode": true, "symlinks": true,
}

// unsafeGitDir says why the git directory at p (a .git, or a directory
// laid out as a bare repository) could make git run something, or "" when
// it is what `git init` makes — or, with cloned, what `git clone` makes.
func unsafeGitDir(p string, cloned bool) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return ""
	}
	if !fi.IsDir() {
		// A .git file points git at another directory, which the command
		// may have filled as it liked.
		return "a .git that is not a directory"
	}
	if why := unsafeConfig(filepath.Join(p, "config"), cloned); why != "" {
		return why
	}
	hooks, err := os.ReadDir(filepath.Join(p, "hooks"))
	if err != nil && !os.IsNotExist(err) {
		return "unreadable hooks"
	}
	for _, h := range hooks {
		if !strings.HasSuffix(h.Name(), ".sample") {
			return "hook " + h.Name()
		}
	}
	for _, extra := range []string{"info/attributes", "commondir", "objects/info/alternates"} {
		if _, err := os.Lstat(filepath.Join(p, extra)); err == nil {
			return extra
		}
	}
	return ""
}

// cloneKeys are the settings `git clone` writes besides [core]: a
// remote's URL and refspec, a branch's upstream. None names a program
// (a URL's transport can: see unsafeConfig).
var cloneKeys = map[string]map[string]bool{
	"remote": {"url": true, "fetch": true},
	"branch": {"remote": true, "merge": true},
}

// unsafeConfig checks a new repository's config: only [core] with the
// keys `git init` writes, and with cloned the settings of cloneKeys.
func unsafeConfig(path string, cloned bool) string {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		return "unreadable config"
	}
	defer f.Close()
	section, sub := "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return fmt.Sprintf("config line %q", line)
			}
			// git reads a setting after the header on the same line.
			if rest := strings.TrimSpace(line[end+1:]); rest != "" && rest[0] != '#' && rest[0] != ';' {
				return fmt.Sprintf("config line %q", line)
			}
			name, subsection, hasSub := strings.Cut(strings.TrimSpace(line[1:end]), " ")
			section, sub = strings.ToLower(name), hasSub && strings.TrimSpace(subsection) != ""
			switch {
			case section == "core" && !sub:
			case cloned && cloneKeys[section] != nil && sub:
			default:
				return fmt.Sprintf("config section [%s]", strings.ToLower(line[1:end]))
			}
			continue
		}
		key, value, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		switch {
		case section == "core" && initCoreKeys[key]:
		case section != "core" && cloneKeys[section][key]:
			// A transport such as ext:: runs a command.
			if key == "url" && strings.Contains(value, "::") {
				return fmt.Sprintf("config key %s.%s", section, key)
			}
		default:
			return fmt.Sprintf("config key %s.%s", section, key)
		}
	}
	if sc.Err() != nil {
		return "unreadable config"
	}
	return ""
}

package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
// Known limit: .git directories created deeper in the tree are not
// checked (finding them would mean walking the tree after every command).

// gitGuard remembers the writable directories that had no .git before a
// command.
type gitGuard struct {
	missing []string // DIR/.git paths that did not exist
}

func newGitGuard(writable []string) *gitGuard {
	g := &gitGuard{}
	for _, w := range writable {
		p := filepath.Join(w, ".git")
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			g.missing = append(g.missing, p)
		}
	}
	return g
}

// sweep removes each .git created since newGitGuard that is not a plain
// `git init` repository, and says what it removed and why.
func (g *gitGuard) sweep() []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, p := range g.missing {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		why := unsafeGitDir(p)
		if why == "" {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			out = append(out, fmt.Sprintf("%s (%s) could not be removed: %v — do not run git there before checking it", p, why, err))
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s)", p, why))
	}
	return out
}

// initCoreKeys are the [core] settings `git init` writes on the platforms
// git supports; none of them names a program.
var initCoreKeys = map[string]bool{
	"repositoryformatversion": true, "filemode": true, "bare": true, "logallrefupdates": true,
	"ignorecase": true, "precomposeunicode": true, "symlinks": true,
}

// unsafeGitDir says why the .git at p could make git run something, or ""
// when it is what `git init` makes.
func unsafeGitDir(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return ""
	}
	if !fi.IsDir() {
		// A .git file points git at another directory, which the command
		// may have filled as it liked.
		return "a .git that is not a directory"
	}
	if why := unsafeConfig(filepath.Join(p, "config")); why != "" {
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

// unsafeConfig checks a new repository's config: only [core] with the
// keys `git init` writes.
func unsafeConfig(path string) string {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		return "unreadable config"
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			if section != "core" {
				return fmt.Sprintf("config section [%s]", section)
			}
			continue
		}
		key, _, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if section != "core" || !initCoreKeys[key] {
			return fmt.Sprintf("config key %s.%s", section, key)
		}
	}
	if sc.Err() != nil {
		return "unreadable config"
	}
	return ""
}

package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/odin-code/odin/internal/policy/approve"
	"github.com/odin-code/odin/internal/policy/shell"
	"github.com/odin-code/odin/tools/tool"
)

// redirect checks one redirection.
func (w *walker) redirect(r *syntax.Redirect, sc *scope) {
	if r.Hdoc != nil {
		w.nested(r.Hdoc, sc)
	}
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		// {NAME}>file stores the new descriptor's number in NAME:
		// {PATH}>/dev/null makes later command names relative paths.
		w.variable(strings.Trim(r.N.Value, "{}"), false, r.N.Value+r.Op.String())
	}
	if r.Word == nil {
		return
	}
	w.nested(r.Word, sc)
	write := false
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return // the body is data; its substitutions were walked above
	case syntax.RdrIn:
	case syntax.DplIn, syntax.DplOut:
		ws := shell.Eval(r.Word)
		if len(ws) == 1 && ws[0].Static && (ws[0].Text == "-" || shell.IsNumber(strings.TrimSuffix(ws[0].Text, "-"))) {
			return // duplicating or closing a descriptor
		}
		write = r.Op == syntax.DplOut
	default: // > >> >| <> &> &>>
		write = true
	}
	if len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return // a pipe to a command walked above
		}
	}
	ws := shell.Eval(r.Word)
	subject := r.Op.String() + shell.Print(r.Word)
	if len(ws) != 1 {
		w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("the redirection `%s` has several targets", subject))
		return
	}
	w.redirectTarget(ws[0], write, subject, sc)
}

// redirectTarget checks a path a command writes (write) or reads.
func (w *walker) redirectTarget(t shell.Word, write bool, subject string, sc *scope) {
	if w.forbiddenOnly {
		return
	}
	if !t.Static || t.Glob || t.Tilde {
		if write && w.ro {
			w.deny(RuleMode, subject, fmt.Sprintf("`%s` writes to a file only known at run time; %s mode changes nothing", subject, w.mode))
			return
		}
		w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the redirection target is only known at run time, so it cannot be checked", subject))
		return
	}
	if devPath(t.Text) {
		return
	}
	if strings.HasPrefix(t.Text, "/dev/tcp/") || strings.HasPrefix(t.Text, "/dev/udp/") {
		// bash itself opens a network connection for these names.
		w.unresolvable(subject, fmt.Sprintf("bash opens a network connection for %s, not a file", t.Text))
		return
	}
	access := tool.AccessRead
	if write {
		access = tool.AccessWrite
	}
	for _, cwd := range sc.cwds {
		lexical := t.Text
		if !filepath.IsAbs(lexical) {
			lexical = filepath.Join(cwd, lexical)
		}
		resolved, err := resolveShell(cwd, t.Text)
		if w.processRelative(err, subject) {
			return
		}
		if err != nil {
			w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the target cannot be resolved (%v)", subject, err))
			continue
		}
		v := w.c.guard.classify(filepath.Clean(lexical), resolved, access)
		if write && w.ro && v.Action != Deny {
			w.deny(RuleMode, subject, fmt.Sprintf("`%s` writes %s; %s mode changes nothing", subject, w.c.guard.display(resolved), w.mode))
			continue
		}
		for _, f := range v.Findings {
			w.v.Add(f)
		}
	}
}

// devPath lists device files that are safe to name in any mode. The
// standard streams are the command's own (already checked) descriptors;
// anything below /dev/fd or /proc/self is not (resolveShell).
func devPath(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty",
		"/dev/fd/0", "/dev/fd/1", "/dev/fd/2":
		return true
	}
	return false
}

// processRelative records err when it is a *processRelativeError and
// reports whether it was one.
func (w *walker) processRelative(err error, subject string) bool {
	var pe *processRelativeError
	if !errors.As(err, &pe) {
		return false
	}
	w.unresolvable(subject, pe.Error())
	return true
}

// paths checks the words a command may open as paths: every argument (and
// option values after = or attached to a short option). A path outside the
// allowed directories asks; for a read-only command one that does not exist
// is skipped, since reading it reads nothing.
func (w *walker) paths(ws []shell.Word, subject string, sc *scope, readOnlyCmd bool) {
	if w.forbiddenOnly {
		return
	}
	for _, a := range ws {
		if !a.Static {
			w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the argument %s is only known at run time, so the paths it names cannot be checked", subject, a.Text))
			continue
		}
		if a.Tilde {
			w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s`: %s names a home directory, outside the project root %s", subject, a.Text, w.c.guard.root))
			continue
		}
		for _, cand := range pathCandidates(a.Text) {
			w.pathArg(cand, a.Glob, subject, sc, readOnlyCmd)
		}
	}
}

// pathCandidates are the strings in an argument that a program may open.
func pathCandidates(s string) []string {
	out := []string{s}
	if strings.HasPrefix(s, "-") {
		if i := strings.IndexByte(s, '='); i >= 0 {
			out = append(out, s[i+1:])
		}
		if !strings.HasPrefix(s, "--") && len(s) > 3 && strings.ContainsAny(s[2:3], "/~.") {
			out = append(out, s[2:])
		}
	}
	return out
}

func (w *walker) pathArg(cand string, glob bool, subject string, sc *scope, readOnlyCmd bool) {
	if cand == "" || devPath(cand) {
		return
	}
	if strings.HasPrefix(cand, "~") {
		w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s`: %s names a home directory, outside the project root %s", subject, cand, w.c.guard.root))
		return
	}
	for _, cwd := range sc.cwds {
		var targets []string
		if glob {
			for _, comp := range strings.Split(filepath.ToSlash(cand), "/") {
				if m, _ := path.Match(comp, ".."); m && comp != ".." {
					w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the pattern %s can match .. and climb out of the directory", subject, cand))
					return
				}
			}
			// The directory the pattern starts from is checked first; only
			// a pattern rooted inside an allowed directory is expanded, so
			// that /*/*/* cannot make the check walk the whole disk.
			prefix := globStart(cand)
			start, err := resolveShell(cwd, prefix)
			if w.processRelative(err, subject) {
				return
			}
			if err != nil || w.c.guard.container(start) == "" {
				w.pathTarget(prefix, cwd, subject, readOnlyCmd)
				continue
			}
			p := cand
			if !filepath.IsAbs(p) {
				p = filepath.Join(cwd, p)
			}
			matches, _ := filepath.Glob(p)
			targets = append(targets, matches...)
		} else {
			targets = append(targets, cand)
		}
		for _, t := range targets {
			w.pathTarget(t, cwd, subject, readOnlyCmd)
		}
	}
}

func (w *walker) pathTarget(t, cwd, subject string, readOnlyCmd bool) {
	resolved, err := resolveShell(cwd, t)
	if w.processRelative(err, subject) || err != nil {
		return
	}
	lexical := t
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(cwd, lexical)
	}
	if !readOnlyCmd {
		// A command that may write, naming a protected file, may be writing
		// it (cp x .git/hooks/pre-commit, touch odin.yaml, rm -rf .git):
		// refused like a redirection there, so neither an approval, an
		// allowed pattern nor --yolo lets it through.
		for _, p := range []string{resolved, filepath.Clean(lexical)} {
			if why := w.c.guard.protectedReason(p); why != "" {
				w.deny(RuleProtected, p, why)
				return
			}
		}
	}
	if w.c.guard.container(resolved) != "" {
		return
	}
	if readOnlyCmd {
		if _, err := os.Lstat(resolved); err != nil {
			return // reading what does not exist reads nothing
		}
	} else if filepath.IsAbs(t) && t == filepath.Clean(t) && !exists(filepath.Dir(resolved)) {
		return // not a path this command could create: its directory is missing too
	}
	via := ""
	if filepath.Clean(lexical) != resolved {
		via = " (through " + filepath.Clean(lexical) + ")"
	}
	w.ask(RuleOutsideRoot, resolved, approve.PathKey(tool.AccessRead, resolved), fmt.Sprintf("`%s` uses %s%s, outside the project root %s (rule %s); to allow it, run with --add-dir %s or add it to permissions.additional_dirs",
		subject, resolved, via, w.c.guard.root, RuleOutsideRoot, suggestDir(resolved)))
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// globMatchesOption reports whether a glob argument matches a file whose
// name starts with '-' in one of the possible directories.
func globMatchesOption(g *Guard, a shell.Word, sc *scope) bool {
	prefix := globStart(a.Text)
	for _, cwd := range sc.cwds {
		if start, err := resolveShell(cwd, prefix); err != nil || g.container(start) == "" {
			continue // outside: the path check asks about it anyway
		}
		p := a.Text
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		matches, _ := filepath.Glob(p)
		for _, m := range matches {
			if strings.HasPrefix(filepath.Base(m), "-") {
				return true
			}
		}
	}
	return false
}

// globStart is the directory a glob pattern starts from: the part before
// its first pattern character, up to the last separator.
func globStart(pattern string) string {
	if i := strings.IndexAny(pattern, "*?["); i > 0 {
		return filepath.Dir(pattern[:i] + "x")
	}
	return "."
}

// gitRepoRisk says why the repository a read-only git command would use
// could run programs, or "". Git runs what its repository's config names
// (core.fsmonitor on status, diff.external, textconv drivers...). The
// project's own .git is protected from tools; but a directory inside the
// project that looks like a bare repository (HEAD, objects/, refs/), or a
// .git file pointing outside any .git directory, has a config any tool may
// have written. Git finds its repository from the working directory (and
// -C) upwards, checking DIR/.git and then DIR itself at each level.
func (w *walker) gitRepoRisk(args []shell.Word, sc *scope) string {
	dirs := slices.Clone(sc.cwds)
	for i := 0; i < len(args); i++ {
		a := args[i].Text
		if !strings.HasPrefix(a, "-") {
			break
		}
		switch a {
		case "-c", "--namespace", "--super-prefix", "--git-dir", "--work-tree", "--config-env":
			i++
			continue
		}
		if a == "-C" && i+1 < len(args) {
			i++
			var next []string
			for _, d := range dirs {
				if r, err := resolveShell(d, args[i].Text); err == nil {
					next = append(next, r)
				}
			}
			dirs = next
		}
	}
	for _, d := range dirs {
		if why := w.gitRepoAt(d); why != "" {
			return why
		}
	}
	return ""
}

func (w *walker) gitRepoAt(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Lstat(dotgit); err == nil {
			switch {
			case fi.IsDir():
				return ""
			case fi.Mode().IsRegular():
				data, err := os.ReadFile(dotgit)
				if err != nil {
					return fmt.Sprintf("git would use the repository named by %s, which cannot be read", dotgit)
				}
				target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
				target = strings.TrimSpace(target)
				if !ok || target == "" {
					return ""
				}
				r, err := resolveShell(d, target)
				if err != nil || !hasGitComponent(r) {
					return fmt.Sprintf("%s points git at %s, outside any .git directory, whose config can run programs", dotgit, target)
				}
				return ""
			default:
				r, err := resolveShell(d, ".git")
				if err != nil || !hasGitComponent(r) {
					return fmt.Sprintf("%s is a link to a repository outside any .git directory, whose config can run programs", dotgit)
				}
				return ""
			}
		}
		if isGitDir(d) && w.c.guard.container(d) != "" {
			return fmt.Sprintf("git would use %s, a bare repository inside the project whose config (which can run programs) tools may have written", d)
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// isGitDir mirrors git's is_git_directory: HEAD, objects/ and refs/.
func isGitDir(d string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(d, p)); err != nil {
			return false
		}
	}
	return true
}

func hasGitComponent(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// maxLinkWalk bounds the entries linksOut looks at.
const maxLinkWalk = 100000

// linksOut checks the trees a command that follows symlinks descends into
// (followsLinks): a symlink in them that leads outside the allowed
// directories is a path the command reads, and asks like one. The trees
// are the operands that are directories (the current directory when none
// is); trees outside the allowed directories were asked about already.
func (w *walker) linksOut(args []shell.Word, subject string, sc *scope) {
	if w.forbiddenOnly {
		return
	}
	seen := 0
	for _, cwd := range sc.cwds {
		var dirs []string
		for _, a := range args {
			if !a.Static || strings.HasPrefix(a.Text, "-") {
				continue
			}
			if dir, err := resolveShell(cwd, a.Text); err == nil {
				if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
					dirs = append(dirs, dir)
				}
			}
		}
		if len(dirs) == 0 {
			dirs = []string{cwd} // grep -R PATTERN, rg -L: the current directory
		}
		for _, dir := range dirs {
			if w.c.guard.container(dir) == "" {
				continue
			}
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if seen++; seen > maxLinkWalk {
					return fs.SkipAll
				}
				if d.Type()&fs.ModeSymlink == 0 {
					return nil
				}
				target, err := resolveShell(filepath.Dir(p), filepath.Base(p))
				if w.processRelative(err, subject) {
					return nil
				}
				if err == nil && w.c.guard.container(target) == "" {
					w.ask(RuleOutsideRoot, target, approve.PathKey(tool.AccessRead, target), fmt.Sprintf("`%s` follows symlinks, and %s leads to %s, outside the project root %s (rule %s); to allow it, run with --add-dir %s or add it to permissions.additional_dirs",
						subject, p, target, w.c.guard.root, RuleOutsideRoot, suggestDir(target)))
				}
				return nil
			})
			if seen > maxLinkWalk {
				w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s` follows symlinks in more than %d files, too many to check where they lead", subject, maxLinkWalk))
				return
			}
		}
	}
}

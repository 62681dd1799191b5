package instructions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/odin-code/odin/internal/workspace"
)

// Names are the instruction files read in each directory, in this order.
// Every one present is read (a project set up for other agents keeps its
// AGENTS.md or CLAUDE.md after `odin init` writes ODIN.md); a file whose
// content or target repeats one already read is skipped.
//
// AGENTS.override.md stands in for AGENTS.md in its directory, as Codex
// reads it; CLAUDE.local.md (Claude Code's personal, unshared file) and
// GEMINI.md (Gemini CLI's) are read beside them.
var Names = []string{"ODIN.md", "AGENTS.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md"}

// agentsOverride replaces AGENTS.md in a directory that holds it.
const agentsOverride = "AGENTS.override.md"

// names are the files to read in dir: Names, with AGENTS.override.md in
// AGENTS.md's place when it exists.
func names(dir string) []string {
	out := make([]string, 0, len(Names))
	_, err := os.Lstat(filepath.Join(dir, agentsOverride))
	for _, n := range Names {
		if n == "AGENTS.md" && err == nil {
			n = agentsOverride
		}
		out = append(out, filepath.Join(dir, n))
	}
	return out
}

// homeFiles are the other agents' user-level instruction files, in the
// home directory: Claude Code's, Codex's and Gemini CLI's.
func homeFiles(home string) []string {
	files := []string{filepath.Join(home, ".claude", "CLAUDE.md")}
	files = append(files, names(filepath.Join(home, ".codex"))[1])
	return append(files, filepath.Join(home, ".gemini", "GEMINI.md"))
}

// MaxBytes caps one instruction file.
const MaxBytes = 64 << 10

// MaxTotalBytes caps all instruction files together (about 64k tokens):
// files past it are left out and reported.
const MaxTotalBytes = 256 << 10

// Source is one loaded instruction file.
type Source struct {
	Path    string
	Content string
	// User is true for the user-level file (in the user's config dir), false
	// for a file of the project.
	User bool
	// ImportedBy names the file whose @import brought this one in; "" for
	// a file Odin looked for itself.
	ImportedBy string
}

// Skipped is an instruction file that was found but not read, and why.
type Skipped struct {
	Path   string
	Reason string
}

func (s Skipped) String() string { return s.Path + ": " + s.Reason }

// Options say where Load looks.
type Options struct {
	// Root is the project root, absolute and resolved (workspace.Resolve).
	Root string
	// UserDir holds the user-level file; "" for none.
	UserDir string
	// Home is the user's home directory: the search for the repository
	// root never goes to it or above it (see workspace.GitRoot).
	Home string
}

// Result is what Load read and what it refused.
type Result struct {
	Sources []Source
	Skipped []Skipped
}

// Load returns the instruction files that apply to the project: the
// user-level files in UserDir (if any), then the files of each directory
// from the repository root (or Root, outside a repository) down to Root.
// A file's "@path" imports (Claude Code's convention: relative to the
// file, "~/" for the home directory, not inside code) follow it, up to
// MaxImportDepth levels.
//
// Project files go through the same resolver as the ReadFile tool: a file
// that is (or passes through) a symlink leading outside the repository, or
// that is not a regular file, is not read and is listed in Skipped, so a
// clone cannot put an arbitrary file of the user's into the prompt; the
// same holds for what a project file imports. An
// error means a file could not be read for another reason.
func Load(opts Options) (Result, error) {
	l := &loader{seen: map[string]bool{}, contents: map[string]bool{}, home: opts.Home}
	if opts.UserDir != "" {
		// The user's own directory: its files may link wherever the user
		// keeps them (dotfiles).
		for _, p := range names(opts.UserDir) {
			if err := l.read(p, "", true); err != nil {
				return Result{}, err
			}
		}
	}
	if opts.Home != "" {
		for _, p := range homeFiles(opts.Home) {
			if err := l.read(p, "", true); err != nil {
				return Result{}, err
			}
		}
	}
	top := opts.Root
	home := opts.Home
	if home != "" {
		if h, err := workspace.Resolve("/", home); err == nil {
			home = h
		}
	}
	if g, ok := workspace.GitRoot(opts.Root, home); ok {
		top = g
	}
	var dirs []string
	for d := opts.Root; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		for _, p := range names(dirs[i]) {
			if err := l.read(p, top, false); err != nil {
				return Result{}, err
			}
		}
	}
	return Result{Sources: l.out, Skipped: l.skipped}, nil
}

type loader struct {
	home     string
	out      []Source
	skipped  []Skipped
	seen     map[string]bool // resolved paths read
	contents map[string]bool // contents read
	total    int
}

// MaxImportDepth bounds nested @imports, as Claude Code does.
const MaxImportDepth = 5

// importRe finds "@path" imports (Claude Code's convention): an @ at the
// start of a line or after a space, followed by a path.
var importRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)(?:^|[ \t])@((?:~/|\.{1,2}/|/)?[A-Za-z0-9_.][^\s` + "`" + `]*)`)
})

// imports returns the @paths of text outside code spans and fenced blocks.
func imports(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = codeSpan().ReplaceAllString(line, "")
		for _, m := range importRe().FindAllStringSubmatch(line, -1) {
			p := strings.TrimRight(m[1], ".,;:)")
			if p != "" && !strings.Contains(p, "@") {
				out = append(out, p)
			}
		}
	}
	return out
}

var codeSpan = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`[^`]*`") })

// read loads path if it exists; with a non-empty guard the file must
// resolve inside guard. Its @imports are read after it, guarded alike.
func (l *loader) read(path, guard string, user bool) error {
	return l.readDepth(path, guard, user, "", 0)
}

func (l *loader) readDepth(path, guard string, user bool, importedBy string, depth int) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	real, err := workspace.Resolve("/", path)
	if err != nil {
		l.skipped = append(l.skipped, Skipped{Path: path, Reason: "cannot be resolved: " + err.Error()})
		return nil
	}
	if guard != "" && !workspace.Within(guard, real) {
		why := fmt.Sprintf("leads to %s, outside the project %s; not read", real, guard)
		if importedBy != "" {
			why = "imported by " + importedBy + ", " + why
		}
		l.skipped = append(l.skipped, Skipped{Path: path, Reason: why})
		return nil
	}
	fi, err := os.Stat(real)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a dangling link
	}
	if err != nil {
		return fmt.Errorf("instructions: %w", err)
	}
	if !fi.Mode().IsRegular() {
		l.skipped = append(l.skipped, Skipped{Path: path, Reason: "not a regular file; not read"})
		return nil
	}
	if l.seen[real] {
		return nil
	}
	l.seen[real] = true
	f, err := os.Open(real)
	if err != nil {
		return fmt.Errorf("instructions: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return fmt.Errorf("instructions: %s: %w", path, err)
	}
	if len(data) > MaxBytes {
		data = append(data[:MaxBytes], []byte("\n[… truncated]")...)
	}
	text := strings.TrimSpace(string(data))
	if text == "" || l.contents[text] {
		return nil
	}
	if l.total+len(text) > MaxTotalBytes {
		l.skipped = append(l.skipped, Skipped{Path: path, Reason: fmt.Sprintf("instruction files exceed %d KiB together; left out", MaxTotalBytes>>10)})
		return nil
	}
	l.contents[text] = true
	l.total += len(text)
	l.out = append(l.out, Source{Path: path, Content: string(data), User: user, ImportedBy: importedBy})
	for _, imp := range imports(text) {
		if depth >= MaxImportDepth {
			l.skipped = append(l.skipped, Skipped{Path: path, Reason: fmt.Sprintf("@%s: imports nested deeper than %d; not read", imp, MaxImportDepth)})
			break
		}
		target := imp
		switch {
		case strings.HasPrefix(imp, "~/"):
			if l.home == "" {
				continue
			}
			target = filepath.Join(l.home, imp[2:])
		case !filepath.IsAbs(imp):
			target = filepath.Join(filepath.Dir(path), imp)
		}
		if _, err := os.Lstat(target); err != nil {
			continue // "@someone" in prose, or a file that is not there
		}
		if err := l.readDepth(target, guard, user, path, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// Join renders the sources as one text, each under a line naming its file.
func Join(srcs []Source) string {
	var b strings.Builder
	for i, s := range srcs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		from := s.Path
		if s.ImportedBy != "" {
			from += " (imported by " + s.ImportedBy + ")"
		}
		fmt.Fprintf(&b, "<!-- from %s -->\n%s", from, strings.TrimSpace(s.Content))
	}
	return b.String()
}

// Project returns the project's sources, without the user-level ones.
func Project(srcs []Source) []Source {
	var out []Source
	for _, s := range srcs {
		if !s.User {
			out = append(out, s)
		}
	}
	return out
}

// User returns the user-level sources.
func User(srcs []Source) []Source {
	var out []Source
	for _, s := range srcs {
		if s.User {
			out = append(out, s)
		}
	}
	return out
}

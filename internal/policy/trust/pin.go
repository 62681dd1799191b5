package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Program is one trusted project entry's command line as Odin would start
// it: an MCP server's command and args (Argv), or a hook's shell command
// (Shell, run with bash -c).
type Program struct {
	Argv  []string
	Shell string
	// Dir is the working directory the program starts in; relative names
	// are resolved against it (default: the root).
	Dir string
	// Env are the variables a shell command may name in its words
	// ($CLAUDE_PROJECT_DIR, $CLAUDE_PLUGIN_ROOT), as the hook will see them.
	Env map[string]string
}

// Pins are the project files a Program executes, by path relative to the
// project root (slash-separated), with their content digest: what `odin
// trust` records for an entry, and what must be unchanged for the entry to
// run again.
type Pins map[string]string

// Digest values besides "sha256:HEX" (a file's content) and
// "tree:sha256:HEX" (a package directory's source files).
const (
	pinAbsent = "absent" // named as a script, but missing: creating it voids trust
	// These two never match: an entry whose files cannot be checked is
	// refused, whatever was recorded.
	pinUnreadable = "unreadable"
	pinUnpinnable = "unpinnable"
)

// Pin limits: a package directory larger than this cannot be pinned (the
// entry is refused until it names its entry file), and a single file
// larger than maxPinFile neither.
const (
	maxPinTreeFiles = 1000
	maxPinTreeBytes = 16 << 20
	maxPinFile      = 256 << 20
)

// ErrUnpinnable is returned (wrapped) when a program names project content
// too large to fingerprint.
var ErrUnpinnable = errors.New("too large to pin")

// PinProgram fingerprints the project files p executes (the rule is in
// pinner's comment). A file outside root is not the project's and is left
// out. The error is ErrUnpinnable when a named directory exceeds the caps;
// the Pins found so far are returned with it.
func PinProgram(root string, p Program) (Pins, error) {
	given := root
	if abs, err := filepath.Abs(root); err == nil {
		given = abs
	}
	root = canonicalRoot(root)
	dir := p.Dir
	if dir == "" {
		dir = root
	}
	pn := &pinner{root: root, given: filepath.Clean(given), pins: Pins{}, env: p.Env}
	if p.Shell != "" {
		pn.shell(p.Shell, dir, 0)
	}
	if len(p.Argv) > 0 {
		pn.argv(p.Argv, dir, 0, true)
	}
	return pn.pins, pn.err
}

// Changes lists how cur differs from p, the pins recorded at trust time:
// "srv.py changed", "hook.sh was deleted", "lib.py was added"; nil when
// they match.
func (p Pins) Changes(cur Pins) []string {
	var out []string
	for _, k := range sortedPinKeys(p, cur) {
		was, wok := p[k]
		now, nok := cur[k]
		switch {
		case now == pinUnpinnable:
			out = append(out, k+" is too large to pin")
		case now == pinUnreadable:
			out = append(out, k+" cannot be read to check it")
		case was == now:
		case !wok && now == pinAbsent:
			// Not recorded and still missing: nothing runs from there.
		case !nok || (now == pinAbsent && wok):
			if was == pinAbsent {
				// Once absent and no longer named: harmless.
				continue
			}
			out = append(out, k+" was deleted or is no longer named")
		case !wok || was == pinAbsent:
			out = append(out, k+" was added")
		default:
			out = append(out, k+" changed")
		}
	}
	return out
}

// Files lists the pinned files that exist (not those pinned as absent),
// sorted.
func (p Pins) Files() []string {
	var out []string
	for _, k := range sortedPinKeys(p) {
		if p[k] != pinAbsent {
			out = append(out, k)
		}
	}
	return out
}

// Shown lists the pins as `odin trust` prints them: "srv.py sha256:0123abcd…".
func (p Pins) Shown() []string {
	var out []string
	for _, k := range sortedPinKeys(p) {
		v := p[k]
		if h, ok := strings.CutPrefix(v, "sha256:"); ok && len(h) > 12 {
			v = "sha256:" + h[:12]
		} else if h, ok := strings.CutPrefix(v, "tree:sha256:"); ok && len(h) > 12 {
			v = "tree sha256:" + h[:12]
		} else if v == pinAbsent {
			v = "(absent: creating it voids trust)"
		}
		out = append(out, k+" "+v)
	}
	return out
}

func sortedPinKeys(ms ...Pins) []string {
	var keys []string
	for _, m := range ms {
		for k := range m {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return slices.Compact(keys)
}

// pinner collects the files one Program executes. The rule:
//
//   - the program itself when it is a path (./bin/srv, .venv/bin/python);
//   - the script an interpreter is given: python/python3/pypy (a file, a
//     directory's __main__.py, or -m MOD: MOD.py or the package directory
//     MOD/), node/nodejs/bun/deno run/ts-node/tsx (a file, or a directory's
//     package.json and the file its "main" names, default index.js; also
//     -r/--require/--import of a local path), ruby, perl, php,
//     bash/sh/zsh/dash/ksh (a file, or the -c string parsed as a shell
//     command), uv run, npx (a local path, or node_modules/.bin/NAME),
//     go run (the .go files named, or those of the package directory);
//     env, exec, nohup, nice and timeout are looked through;
//   - for an MCP server's command line (not a hook's shell command, whose
//     other arguments are often files it writes), any other argument (or
//     --flag=VALUE's value) that names an existing project file.
//
// A script that is named but missing is pinned as absent, so creating it
// voids trust. What a program loads by itself (imports, require()) is not
// followed: pin the entry file, not the module graph.
type pinner struct {
	root  string // symlinks resolved
	given string // as the caller named it: a missing file is named under it
	env   map[string]string
	pins  Pins
	err   error
}

// maxPinDepth bounds sh -c nesting.
const maxPinDepth = 4

// shell pins what every simple command in a shell command line runs.
func (pn *pinner) shell(src, dir string, depth int) {
	if depth > maxPinDepth {
		return
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return // bash will refuse it too
	}
	cfg := &expand.Config{
		Env: expand.FuncEnviron(func(name string) string { return pn.env[name] }),
		ProcSubst: func(*syntax.ProcSubst) (string, error) {
			return "", errors.New("process substitution")
		},
		// python3 hooks/*.py runs the files the glob finds.
		ReadDir2: func(d string) ([]fs.DirEntry, error) {
			if !filepath.IsAbs(d) {
				d = filepath.Join(dir, d)
			}
			return os.ReadDir(d)
		},
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if args, ok := fields(cfg, n.Args); ok && len(args) > 0 {
				pn.argv(args, dir, depth, false)
			}
		case *syntax.Redirect:
			// bash < script.sh runs the file it reads.
			if n.Op == syntax.RdrIn && n.Word != nil {
				if args, ok := fields(cfg, []*syntax.Word{n.Word}); ok && len(args) == 1 {
					pn.existing(args[0], dir)
				}
			}
		}
		return true
	})
}

// fields expands words statically; ok is false when a word needs a
// command to run (a command substitution), which pinning cannot do.
func fields(cfg *expand.Config, words []*syntax.Word) (out []string, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	out, err := expand.Fields(cfg, words...)
	return out, err == nil
}

// argv pins what one command line runs.
// generic is set for an exec-form command line (an MCP server's): its
// other arguments naming project files are pinned too. A shell command's
// (a hook's) are not: hooks may write the project, and the files they
// name (touch hook-ran.txt, a log) are their data, not their code.
func (pn *pinner) argv(args []string, dir string, depth int, generic bool) {
	if len(args) == 0 {
		return
	}
	prog := args[0]
	if strings.Contains(prog, "/") {
		pn.script(prog, dir)
	}
	base := filepath.Base(prog)
	if inner, innerDir, ok := pn.unwrap(base, args[1:], dir); ok {
		pn.argv(inner, innerDir, depth, generic)
		return
	}
	rest := pn.interpreter(base, args[1:], dir, depth, generic)
	if !generic {
		return
	}
	// Any other argument naming an existing project file (a config, a
	// data file a server reads): pinned too.
	for _, a := range rest {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if a != "" && !strings.HasPrefix(a, "-") {
			pn.existing(a, dir)
		}
	}
}

// unwrap returns the command a wrapper (env, exec, nohup, nice, timeout...)
// runs and the directory it runs in; ok is false when base is no wrapper.
func (pn *pinner) unwrap(base string, rest []string, dir string) (inner []string, innerDir string, ok bool) {
	switch base {
	case "env":
		for len(rest) > 0 && (strings.HasPrefix(rest[0], "-") || strings.Contains(rest[0], "=")) {
			if rest[0] == "-u" || rest[0] == "-C" || rest[0] == "-S" {
				if len(rest) > 1 && rest[0] == "-C" {
					dir = pn.abs(rest[1], dir)
				}
				rest = rest[min(2, len(rest)):]
				continue
			}
			rest = rest[1:]
		}
		return rest, dir, true
	case "exec", "nohup", "command", "builtin":
		return dropFlags(rest, nil), dir, true
	case "nice":
		return dropFlags(rest, []string{"-n"}), dir, true
	case "timeout":
		rest = dropFlags(rest, []string{"-s", "-k", "--signal", "--kill-after"})
		return rest[min(1, len(rest)):], dir, true
	}
	return nil, dir, false
}

// nodeEval are the options of node and bun whose value is code.
var nodeEval = []string{"-e", "--eval", "-p", "--print"}

// interpreter pins the script an interpreter or package runner runs, and
// returns the arguments left for the generic pass.
func (pn *pinner) interpreter(base string, rest []string, dir string, depth int, generic bool) []string {
	switch {
	case isPinShell(base):
		pn.shellArgs(rest, dir, depth)
	case isPython(base):
		pn.pythonArgs(rest, dir)
	case base == "node" || base == "nodejs" || base == "ts-node" || base == "tsx":
		pn.nodeArgs(rest, dir, nodeEval)
	case base == "bun":
		if len(rest) > 0 && rest[0] == "run" {
			rest = rest[1:]
		}
		pn.nodeArgs(rest, dir, nodeEval)
	case base == "deno":
		if len(rest) > 0 && (rest[0] == "run" || rest[0] == "serve") {
			pn.nodeArgs(rest[1:], dir, []string{"--eval"})
		}
	case base == "ruby" || base == "perl" || base == "php":
		pn.interpArgs(rest, dir, []string{"-e", "-E", "-r"}, []string{"-I", "-C", "-d", "-x"})
	case base == "uv":
		rest = pn.uvRun(rest, dir, depth, generic)
	case base == "npx" || base == "pnpx" || (base == "pnpm" && len(rest) > 0 && rest[0] == "dlx"):
		if base == "pnpm" {
			rest = rest[1:]
		}
		rest = dropFlags(rest, []string{"-p", "--package", "-c", "--call"})
		if len(rest) > 0 {
			pn.npxTarget(rest[0], dir)
		}
	case base == "go":
		if len(rest) > 0 && rest[0] == "run" {
			pn.goRun(rest[1:], dir)
		}
	}
	return rest
}

// uvRun pins what uv run runs: a Python or a path is a command line, any
// other name a script. It returns the arguments after uv run's options.
func (pn *pinner) uvRun(rest []string, dir string, depth int, generic bool) []string {
	if len(rest) == 0 || rest[0] != "run" {
		return rest
	}
	rest = dropFlags(rest[1:], []string{"--with", "--python", "-p", "--project", "--directory", "--package", "--extra", "--group", "--env-file", "--index", "--with-requirements"})
	switch {
	case len(rest) == 0:
	case isPython(filepath.Base(rest[0])) || strings.Contains(rest[0], "/"):
		pn.argv(rest, dir, depth, generic)
	default:
		pn.script(rest[0], dir)
	}
	return rest
}

func isPinShell(base string) bool {
	return slices.Contains([]string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"}, base)
}

var pythonName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(python|pypy)[0-9.]*$`) })

func isPython(base string) bool { return pythonName().MatchString(base) }

// dropFlags skips leading options; those in withValue take the next word.
func dropFlags(args, withValue []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] == "--" {
			return args[1:]
		}
		if slices.Contains(withValue, args[0]) && len(args) > 1 {
			args = args[2:]
			continue
		}
		args = args[1:]
	}
	return args
}

// shellArgs: sh [opts] -c STRING, or sh [opts] SCRIPT.
func (pn *pinner) shellArgs(rest []string, dir string, depth int) {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			if i+1 < len(rest) {
				pn.script(rest[i+1], dir)
			}
			return
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c"):
			if i+1 < len(rest) {
				pn.shell(rest[i+1], dir, depth+1)
			}
			return
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if strings.Contains(a, "s") && !strings.HasPrefix(a, "--") {
				return // the script comes from stdin
			}
		default:
			pn.script(a, dir)
			return
		}
	}
}

// pythonArgs: python [opts] (-c CODE | -m MOD | SCRIPT|DIR).
func (pn *pinner) pythonArgs(rest []string, dir string) {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "-c" || strings.HasPrefix(a, "-c"):
			return
		case a == "-m":
			if i+1 < len(rest) {
				pn.pythonModule(rest[i+1], dir)
			}
			return
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			pn.pythonModule(a[2:], dir)
			return
		case a == "-W" || a == "-X" || a == "--check-hash-based-pycs":
			i++
		case a == "-" || a == "--":
			if a == "--" && i+1 < len(rest) {
				pn.script(rest[i+1], dir)
			}
			return
		case strings.HasPrefix(a, "-"):
		default:
			p := pn.abs(a, dir)
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				pn.script(filepath.Join(p, "__main__.py"), dir)
				return
			}
			pn.script(a, dir)
			return
		}
	}
}

// pythonModule pins MOD's top-level module as python -m finds it first in
// the working directory: MOD.py, or the package directory MOD/ (its .py
// files); both absent means creating either voids trust.
func (pn *pinner) pythonModule(mod, dir string) {
	top, _, _ := strings.Cut(mod, ".")
	if top == "" || strings.ContainsAny(top, "/\\") {
		return
	}
	file := filepath.Join(dir, top+".py")
	pkg := filepath.Join(dir, top)
	if fi, err := os.Stat(pkg); err == nil && fi.IsDir() {
		pn.tree(pkg, func(name string) bool { return strings.HasSuffix(name, ".py") }, false)
		return
	}
	pn.script(file, dir)
	if pn.inside(pkg) != "" {
		if _, err := os.Lstat(pkg); errors.Is(err, fs.ErrNotExist) {
			pn.pins[pn.inside(pkg)+"/"] = pinAbsent
		}
	}
}

// nodeArgs: node [opts] (SCRIPT|DIR) ...; eval options end the search.
func (pn *pinner) nodeArgs(rest []string, dir string, eval []string) {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		name, val, hasVal := strings.Cut(a, "=")
		switch {
		case slices.Contains(eval, name):
			return
		case name == "-r" || name == "--require" || name == "--import" || name == "--loader" || name == "--experimental-loader" ||
			name == "--config" || name == "-c" || name == "--import-map":
			if !hasVal {
				if i+1 >= len(rest) {
					return
				}
				i++
				val = rest[i]
			}
			if strings.HasPrefix(val, ".") || strings.HasPrefix(val, "/") {
				pn.script(val, dir)
			}
		case a == "--":
			if i+1 < len(rest) {
				pn.nodeEntry(rest[i+1], dir)
			}
			return
		case strings.HasPrefix(a, "-"):
		default:
			pn.nodeEntry(a, dir)
			return
		}
	}
}

// nodeEntry pins a script, or a directory's package.json and its main.
func (pn *pinner) nodeEntry(a, dir string) {
	p := pn.abs(a, dir)
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		if strings.HasPrefix(a, "npm:") || strings.HasPrefix(a, "jsr:") || strings.Contains(a, "://") {
			return // deno runs a remote module, not a project file
		}
		pn.script(a, dir)
		return
	}
	manifest := filepath.Join(p, "package.json")
	pn.script(manifest, dir)
	main := "index.js"
	if data, err := os.ReadFile(manifest); err == nil {
		var m struct {
			Main string `json:"main"`
		}
		if json.Unmarshal(data, &m) == nil && m.Main != "" {
			main = m.Main
		}
	}
	entry := filepath.Join(p, main)
	if fi, err := os.Stat(entry); err == nil && fi.IsDir() {
		entry = filepath.Join(entry, "index.js")
	}
	pn.script(entry, dir)
}

// interpArgs: ruby/perl/php [opts] SCRIPT; eval options end the search,
// withValue options take the next word.
func (pn *pinner) interpArgs(rest []string, dir string, eval, withValue []string) {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case slices.Contains(eval, a):
			return
		case slices.Contains(withValue, a):
			i++
		case a == "--":
			if i+1 < len(rest) {
				pn.script(rest[i+1], dir)
			}
			return
		case strings.HasPrefix(a, "-"):
		default:
			pn.script(a, dir)
			return
		}
	}
}

// npxTarget: a local path is the program; a bare package name runs the
// project's node_modules/.bin/NAME when there is one, so that is pinned
// (absent when missing).
func (pn *pinner) npxTarget(a, dir string) {
	if strings.HasPrefix(a, ".") || strings.HasPrefix(a, "/") {
		pn.script(a, dir)
		return
	}
	name := a
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndex(name, "@"); i > 0 {
		name = name[:i]
	}
	if name != "" && !strings.HasPrefix(name, "@") {
		pn.script(filepath.Join(dir, "node_modules", ".bin", name), dir)
	}
}

// goRun: go run [flags] (FILE.go... | PKGDIR) [args].
func (pn *pinner) goRun(rest []string, dir string) {
	rest = dropFlags(rest, []string{"-C", "-exec", "-tags", "-ldflags", "-gcflags", "-mod", "-modfile", "-o", "-p", "-pgo", "-overlay"})
	named := false
	for _, a := range rest {
		if strings.HasSuffix(a, ".go") {
			pn.script(a, dir)
			named = true
			continue
		}
		if named {
			return
		}
		if strings.HasPrefix(a, ".") || strings.HasPrefix(a, "/") {
			p := pn.abs(a, dir)
			pn.tree(p, func(name string) bool { return strings.HasSuffix(name, ".go") }, true)
		}
		return
	}
}

// abs makes a resolved against dir.
func (pn *pinner) abs(a, dir string) string {
	if strings.HasPrefix(a, "~/") {
		return a // the home directory is not the project's
	}
	if filepath.IsAbs(a) {
		return filepath.Clean(a)
	}
	return filepath.Join(dir, a)
}

// inside returns p (absolute) relative to the root, following symlinks
// when they exist, or "" when p is not the project's.
func (pn *pinner) inside(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		if rel, ok := relWithin(pn.root, real); ok {
			// Named inside or resolving inside: keyed by the name given
			// when that is in the project, so the message names it.
			for _, r := range []string{pn.root, pn.given} {
				if lrel, ok := relWithin(r, p); ok {
					return lrel
				}
			}
			return rel
		}
	}
	for _, r := range []string{pn.root, pn.given} {
		if rel, ok := relWithin(r, p); ok {
			return rel
		}
	}
	return ""
}

func relWithin(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// script pins a file an interpreter runs: its content, or absent.
func (pn *pinner) script(a, dir string) {
	p := pn.abs(a, dir)
	rel := pn.inside(p)
	if rel == "" || rel == "." {
		return
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		pn.pins[rel] = pinAbsent
	case err != nil:
		pn.pins[rel] = pinUnreadable
	case fi.IsDir():
		// A directory where a script was expected: the interpreter fails.
	default:
		pn.file(rel, p)
	}
}

// existing pins a generic argument when it names an existing project file.
func (pn *pinner) existing(a, dir string) {
	p := pn.abs(a, dir)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	if rel := pn.inside(p); rel != "" {
		pn.file(rel, p)
	}
}

func (pn *pinner) file(rel, p string) {
	if _, ok := pn.pins[rel]; ok {
		return
	}
	d, err := fileDigest(p)
	if err != nil {
		if errors.Is(err, ErrUnpinnable) {
			pn.fail(fmt.Errorf("%s: %w", rel, err))
		}
		d = pinUnreadable
	}
	pn.pins[rel] = d
}

func (pn *pinner) fail(err error) {
	if pn.err == nil {
		pn.err = err
	}
}

func fileDigest(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxPinFile+1))
	if err != nil {
		return "", err
	}
	if n > maxPinFile {
		return "", fmt.Errorf("a file over %d MiB is %w", maxPinFile>>20, ErrUnpinnable)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// treeSkip are directories a package tree digest never enters: version
// control, dependencies and caches (not the package's own source).
var treeSkip = []string{".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"}

// tree pins a package directory as one digest over the relative names and
// contents of its source files (those keep selects), capped. flat limits
// it to the directory's own files (a Go package), not its subdirectories.
func (pn *pinner) tree(dir string, keep func(name string) bool, flat bool) {
	rel := pn.inside(dir)
	if rel == "" {
		return
	}
	if _, ok := pn.pins[rel+"/"]; ok {
		return
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		pn.pins[rel+"/"] = pinAbsent
		return
	}
	type entry struct{ name, digest string }
	var files []entry
	var total int64
	var tooBig error
	walkErr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable part changes the digest by its absence
		}
		if d.IsDir() {
			if p != dir && (flat || slices.Contains(treeSkip, d.Name())) {
				return filepath.SkipDir
			}
			return nil
		}
		if !keep(d.Name()) {
			return nil
		}
		info, err := os.Stat(p) // follows a symlinked file
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		total += info.Size()
		if len(files) >= maxPinTreeFiles || total > maxPinTreeBytes {
			tooBig = fmt.Errorf("%s/: over %d files or %d MiB of source is %w; name its entry file instead", rel, maxPinTreeFiles, maxPinTreeBytes>>20, ErrUnpinnable)
			return filepath.SkipAll
		}
		sum, err := fileDigest(p)
		if err != nil {
			sum = pinUnreadable
		}
		name, _ := filepath.Rel(dir, p)
		files = append(files, entry{filepath.ToSlash(name), sum})
		return nil
	})
	if tooBig != nil || walkErr != nil {
		pn.fail(errors.Join(tooBig, walkErr))
		pn.pins[rel+"/"] = pinUnpinnable
		return
	}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%d:%s%d:%s", len(f.name), f.name, len(f.digest), f.digest)
	}
	pn.pins[rel+"/"] = "tree:sha256:" + hex.EncodeToString(h.Sum(nil))
}

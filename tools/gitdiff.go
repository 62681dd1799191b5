package tools

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed gitdiff.md
var gitDiffDescription string

const (
	gitDiffMaxOutput = 40000            // bytes of diff shown; the rest is cut with a note
	gitDiffTimeout   = 60 * time.Second // one git invocation
	gitMaxUntracked  = 200              // untracked files listed or diffed
	// gitUntrackedMaxBytes bounds an untracked file that is diffed or
	// counted: a bigger one (a dataset, a sparse image) is listed with its
	// size, since reading it would cost its whole size in memory.
	gitUntrackedMaxBytes = 8 << 20
)

// gitSafeArgs keep git from running anything the repository configures:
// hooks, an fsmonitor daemon, a bare repository planted in the tree.
// --no-ext-diff and --no-textconv (per command) cover diff drivers, and
// gitRunner.neutraliseFilters covers clean/smudge filters.
func gitSafeArgs() []string {
	return []string{
		"-c", "safe.bareRepository=explicit",
		"-c", "core.fsmonitor=false",
		"-c", "core.hooksPath=/dev/null",
		"--no-pager",
	}
}

// GitDiffInput is GitDiff's input.
type GitDiffInput struct {
	Path             string `json:"path,omitempty" jsonschema:"Only this path"`
	Staged           bool   `json:"staged,omitempty" jsonschema:"Index vs HEAD instead"`
	Base             string `json:"base,omitempty" jsonschema:"Commit, branch or tag to compare with, or A..B"`
	StatOnly         bool   `json:"stat_only,omitempty" jsonschema:"Only files and line counts"`
	IncludeUntracked bool   `json:"include_untracked,omitempty" jsonschema:"Add new untracked files"`
}

// NewGitDiff returns GitDiff, a read-only view of a git repository's
// changes. It never runs hooks, pagers, external diff or textconv drivers,
// and reads neither the system git config nor inherited GIT_* variables.
// Its git runs unconfined; NewGitDiffWith runs it in a session's sandbox.
func NewGitDiff() tool.Tool { return NewGitDiffWith(nil) }

// NewGitDiffWith is NewGitDiff whose git runs through l, read-only.
func NewGitDiffWith(l *sandbox.Launcher) tool.Tool {
	return newBuiltin[GitDiffInput](NameGitDiff, tool.ClassRead, gitDiffDescription,
		func(ctx context.Context, env *tool.Env, in GitDiffInput) (tool.Result, error) {
			return gitDiff(ctx, l, env, in)
		})
}

func gitDiff(ctx context.Context, l *sandbox.Launcher, env *tool.Env, in GitDiffInput) (tool.Result, error) {
	if env == nil || env.Root == "" {
		return tool.Result{}, errors.New("tools: GitDiff: env has no project root")
	}
	dir, spec := env.Root, env.Root
	if in.Path != "" {
		p, bad, err := resolveArgPath(ctx, env, "path", in.Path, tool.AccessRead)
		if err != nil || bad != nil {
			return deref(bad), err
		}
		info, err := os.Stat(p)
		switch {
		case err == nil && info.IsDir():
			dir = p
		case err == nil || errors.Is(err, os.ErrNotExist):
			// A deleted file still has a diff; run from its directory if
			// that exists.
			dir = filepath.Dir(p)
			if _, err := os.Stat(dir); err != nil {
				dir = env.Root
			}
		default:
			return tool.Errorf("cannot access %s: %v", p, unwrapPathError(err)), nil
		}
		spec = p
	}
	if strings.HasPrefix(in.Base, "-") {
		return tool.Errorf("base %q is not a revision (it starts with '-'); give a commit, branch or tag", in.Base), nil
	}
	if strings.Contains(in.Base, "..") && in.Staged {
		return tool.Errorf("staged cannot be combined with the range %q: a range compares two commits", in.Base), nil
	}
	git := &gitRunner{dir: dir, launcher: l}
	top, stderr, err := git.run(ctx, 0, "rev-parse", "--show-toplevel")
	if err != nil {
		return tool.Errorf("%s is not inside a git repository, so there is nothing to diff (git: %s)", dir, firstLine(stderr, err)), nil
	}
	if err := git.neutraliseFilters(ctx); err != nil {
		return tool.Errorf("reading the repository's git config failed: %v", err), nil
	}

	args := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color"}
	if in.Staged {
		args = append(args, "--cached")
	}
	if in.StatOnly {
		args = append(args, "--stat")
	}
	if in.Base != "" {
		args = append(args, in.Base)
	}
	args = append(args, "--", spec)
	stdout, stderr, err := git.run(ctx, gitDiffMaxOutput, args...)
	if err != nil {
		return tool.Errorf("git %s failed: %s", strings.Join(args, " "), firstLine(stderr, err)), nil
	}

	var b strings.Builder
	fmt.Fprintf(&b, "$ git %s\n", strings.Join(args, " "))
	diff := strings.ToValidUTF8(stdout.String(), "\uFFFD")
	if strings.TrimSpace(diff) == "" {
		fmt.Fprintf(&b, "No changes (%s).\n", describeComparison(in))
	} else {
		b.WriteString(hideDeniedDiffs(env, strings.TrimSpace(top.String()), diff))
		if stdout.dropped > 0 {
			fmt.Fprintf(&b, "\n… (diff truncated: %d more bytes; narrow it with path or use stat_only)\n", stdout.dropped)
		}
	}
	if in.IncludeUntracked {
		untracked, err := untrackedDiff(ctx, env, git, spec, in.StatOnly, gitDiffMaxOutput-stdout.Len())
		if err != nil {
			return tool.Errorf("listing untracked files failed: %v", err), nil
		}
		b.WriteString(untracked)
	}
	return tool.Result{Output: strings.TrimRight(b.String(), "\n")}, nil
}

func describeComparison(in GitDiffInput) string {
	switch {
	case strings.Contains(in.Base, ".."):
		return "between the commits of " + in.Base
	case in.Staged && in.Base != "":
		return "index vs " + in.Base
	case in.Staged:
		return "index vs HEAD; nothing is staged"
	case in.Base != "":
		return "working tree vs " + in.Base
	}
	return "working tree vs index; use base=HEAD to include staged changes"
}

// untrackedDiff lists the untracked files under spec, as new-file diffs or
// (statOnly) with their line counts.
func untrackedDiff(ctx context.Context, env *tool.Env, git *gitRunner, spec string, statOnly bool, budget int) (string, error) {
	out, stderr, err := git.run(ctx, 0, "ls-files", "--others", "--exclude-standard", "-z", "--", spec)
	if err != nil {
		return "", errors.New(firstLine(stderr, err))
	}
	files := strings.Split(strings.TrimRight(out.String(), "\x00"), "\x00")
	if len(files) == 1 && files[0] == "" {
		return "Untracked files: none.\n", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Untracked files (%d):\n", len(files))
	for i, f := range files {
		if i == gitMaxUntracked || (budget <= 0 && !statOnly) {
			fmt.Fprintf(&b, "… and %d more untracked files\n", len(files)-i)
			break
		}
		note, readable := untrackedNote(filepath.Join(git.dir, f))
		if deniedRead(env, filepath.Join(git.dir, f)) != nil {
			note, readable = "(on the read deny list: not shown)", false
		}
		if statOnly || !readable {
			fmt.Fprintf(&b, "  %s %s\n", f, note)
			continue
		}
		// --no-index exits 1 when the files differ, which they do.
		d, stderr, err := git.run(ctx, budget, "diff", "--no-index", "--no-ext-diff", "--no-textconv", "--no-color", "--", "/dev/null", f)
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			fmt.Fprintf(&b, "  %s (cannot diff: %s)\n", f, firstLine(stderr, err))
			continue
		}
		b.WriteString(strings.ToValidUTF8(d.String(), "\uFFFD"))
		budget -= d.Len()
		if d.dropped > 0 {
			fmt.Fprintf(&b, "… (truncated: %d more bytes)\n", d.dropped)
			budget = 0
		}
	}
	return b.String(), nil
}

// untrackedNote describes an untracked file for the list: its line count
// or size, or why it is not shown. readable is false for what must not be
// read or diffed: special files (a FIFO blocks, a device never ends), and
// files past gitUntrackedMaxBytes. A symlink is readable: git shows its
// target's name, never the target's content.
func untrackedNote(path string) (note string, readable bool) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("(cannot read: %v)", unwrapPathError(err)), false
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Sprintf("(symlink to %s)", target), true
	case !fi.Mode().IsRegular():
		return fmt.Sprintf("(%s; special files are not read)", fileKind(fi.Mode())), false
	case fi.Size() > gitUntrackedMaxBytes:
		return fmt.Sprintf("(%s; too large to show, more than %s)", HumanBytes(fi.Size()), HumanBytes(gitUntrackedMaxBytes)), false
	}
	data, _, err := fsutil.ReadFileIn(filepath.Dir(path), path, gitUntrackedMaxBytes)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", unwrapPathError(err)), false
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return fmt.Sprintf("(binary, %s)", HumanBytes(int64(len(data)))), true
	}
	return fmt.Sprintf("(%d lines)", countLines(string(data))), true
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// gitRunner runs git in one directory with the safety overrides, inside
// the sandbox (read-only: a diff writes nothing).
type gitRunner struct {
	launcher  *sandbox.Launcher
	dir       string
	overrides []string // -c settings that disarm the repository's filters
}

// neutraliseFilters turns every clean/smudge filter the repository
// configures into cat. Comparing the working tree runs the clean filter,
// and a filter is an arbitrary command from .git/config; git has no switch
// to turn filters off, so each one is overridden by name. Reading config
// runs nothing.
func (g *gitRunner) neutraliseFilters(ctx context.Context) error {
	out, stderr, err := g.run(ctx, 0, "config", "-z", "--get-regexp", `^filter\.`)
	var ee *exec.ExitError
	if err != nil {
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return nil // no filter configured
		}
		return errors.New(firstLine(stderr, err))
	}
	seen := map[string]bool{}
	for _, entry := range strings.Split(out.String(), "\x00") {
		key, _, _ := strings.Cut(entry, "\n")
		i := strings.LastIndexByte(key, '.')
		if i <= len("filter.") {
			continue
		}
		name := key[len("filter."):i]
		if seen[name] {
			continue
		}
		seen[name] = true
		g.overrides = append(g.overrides,
			"-c", "filter."+name+".clean=cat",
			"-c", "filter."+name+".smudge=cat",
			"-c", "filter."+name+".process=",
			"-c", "filter."+name+".required=false")
	}
	return nil
}

// run runs git with args. limit > 0 caps stdout (the rest is counted, not
// kept).
func (g *gitRunner) run(ctx context.Context, limit int, args ...string) (*capBuffer, string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitDiffTimeout)
	defer cancel()
	argv := append(append([]string{"git"}, gitSafeArgs()...), g.overrides...)
	proc, err := g.launcher.Command(ctx, sandbox.Spec{Args: append(argv, args...), Dir: g.dir, Env: gitEnv(), Agent: "git"})
	if err != nil {
		return &capBuffer{}, "", err
	}
	defer proc.Release()
	cmd := proc.Cmd
	stdout := &capBuffer{limit: limit}
	errBuf := &capBuffer{limit: 4096}
	cmd.Stdout, cmd.Stderr = stdout, errBuf
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%w (%v)", err, ctx.Err())
	}
	return stdout, errBuf.String(), err
}

// gitEnv are settings added to the sandbox's filtered environment (which
// passes no GIT_* variable unless the user lists one; the ones here win)
// that keep git from paging, prompting, taking optional locks or reading
// the system config.
func gitEnv() []string {
	return append([]string(nil),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",    // a read-only view must not write the index
		"GIT_LITERAL_PATHSPECS=1", // paths are paths, not globs
		"NO_COLOR=1",
		"LC_ALL=C",
	)
}

func firstLine(stderr string, err error) string {
	s := strings.TrimSpace(stderr)
	if s == "" {
		return err.Error()
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// capBuffer keeps the first limit bytes written (all when limit is 0) and
// counts the rest, so a huge diff costs no memory. It deliberately does not
// embed bytes.Buffer: io.Copy would use the promoted ReadFrom and bypass
// the cap.
type capBuffer struct {
	buf     bytes.Buffer
	limit   int
	dropped int64
}

func (c *capBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if c.limit > 0 {
		room := max(c.limit-c.buf.Len(), 0)
		if room < len(p) {
			c.dropped += int64(len(p) - room)
			p = p[:room]
		}
	}
	c.buf.Write(p)
	return n, nil
}

func (c *capBuffer) String() string { return c.buf.String() }
func (c *capBuffer) Len() int       { return c.buf.Len() }

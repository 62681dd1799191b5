package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/odin-code/odin/internal/sandbox"
)

// gitTimeout bounds one git invocation.
const gitTimeout = 2 * time.Minute

// ErrNotGit is returned by Create for a project that is not a git
// repository (or whose repository has no commit yet).
var ErrNotGit = errors.New("worktree: isolation needs a git repository with at least one commit")

// git runs git in one directory with the repository's code-running
// settings disarmed.
type git struct {
	launcher *sandbox.Launcher
	dir      string
	env      []string // added after the sandbox's filtered environment
	// writable are the directories this call may write in the sandbox
	// (the repository's worktree records, the worktree, its private git
	// directory); everything else, the project and its .git included, is
	// read-only.
	writable []string
	// overrides neutralise the repository's clean/smudge filters.
	overrides []string
	// visible are further directories git reads (a linked worktree's git
	// directory and its repository's), shown although under /tmp.
	visible []string
}

// safeArgs keep git from running anything the repository configures:
// hooks (git worktree add runs post-checkout), an fsmonitor daemon, a
// bare repository planted in the tree, automatic gc.
func safeArgs() []string {
	return []string{"-c", "safe.bareRepository=explicit", "-c", "core.fsmonitor=false",
		"-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", "-c", "core.autocrlf=false",
		"-c", "core.symlinks=true", "--no-pager"}
}

func baseEnv() []string {
	return []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "LC_ALL=C",
		"GIT_LITERAL_PATHSPECS=1", "GIT_OPTIONAL_LOCKS=0", "GIT_AUTHOR_NAME=odin", "GIT_AUTHOR_EMAIL=odin@localhost",
		"GIT_COMMITTER_NAME=odin", "GIT_COMMITTER_EMAIL=odin@localhost"}
}

// run runs git with args and returns its stdout.
func (g git) with(writable ...string) *git {
	g.writable = append(append([]string(nil), g.writable...), writable...)
	return &g
}

func (g *git) run(ctx context.Context, args ...string) ([]byte, error) {
	return g.runIn(ctx, nil, args...)
}

func (g *git) runIn(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	argv := append(append(append([]string{"git"}, safeArgs()...), g.overrides...), args...)
	proc, err := g.launcher.Command(ctx, sandbox.Spec{Args: argv, Dir: g.dir, Env: append(baseEnv(), g.env...), Agent: "git",
		Writable: g.writable, Visible: append([]string{g.dir}, g.visible...)})
	if err != nil {
		return nil, fmt.Errorf("worktree: git %s: %w", args[0], err)
	}
	defer proc.Release()
	var out, errb bytes.Buffer
	proc.Stdout, proc.Stderr = &out, &errb
	if stdin != nil {
		proc.Stdin = bytes.NewReader(stdin)
	}
	proc.WaitDelay = time.Second
	if err := proc.Run(); err != nil {
		return out.Bytes(), &gitError{args: args, stderr: strings.TrimSpace(errb.String()), err: err}
	}
	return out.Bytes(), nil
}

// gitError is a failed git command with its stderr.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := e.stderr
	if msg == "" {
		msg = e.err.Error()
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Sprintf("worktree: git %s: %s", e.args[0], msg)
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is git's exit status, -1 when it did not exit normally.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// neutraliseFilters turns every clean/smudge filter of the repository into
// cat: checking out and hashing files would run them, and a filter is an
// arbitrary command from .git/config. Reading the config runs nothing.
func (g *git) neutraliseFilters(ctx context.Context) error {
	out, err := g.run(ctx, "config", "-z", "--get-regexp", `^filter\.`)
	if err != nil {
		if exitCode(err) == 1 {
			return nil // none configured
		}
		return err
	}
	seen := map[string]bool{}
	for _, entry := range strings.Split(string(out), "\x00") {
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
		g.overrides = append(g.overrides, "-c", "filter."+name+".clean=cat", "-c", "filter."+name+".smudge=cat",
			"-c", "filter."+name+".process=", "-c", "filter."+name+".required=false")
	}
	return nil
}

package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Repo names the tree a remote specialist works on: a commit the worker
// fetches from the first of URLs that has it, and the session's
// uncommitted changes on top of it.
type Repo struct {
	// URLs are where the commit can be fetched from: the session's root
	// (reachable on one machine or a shared disk), then its origin.
	URLs   []string `json:"urls"`
	Commit string   `json:"commit"`
	// Patch is `git diff --binary` from Commit to the working tree,
	// untracked files included (ignored ones and those the session may
	// not read left out).
	Patch []byte `json:"patch,omitempty"`
	// Dir is the session's root within the repository ("" for its top
	// level): the task works there.
	Dir string `json:"dir,omitempty"`
}

// maxPatch bounds the uncommitted changes shipped with a task: the wire's
// messages are capped at 4 MB, and a tree that far from its commit is
// searched faster where it is.
const maxPatch = 3 << 20

var commitID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// gitSafe are the settings every git Odin runs for the cluster carries:
// no hooks, no fsmonitor, no external diff or text conversion, and a
// local path may be fetched from.
var gitSafe = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "diff.external=",
	"-c", "safe.bareRepository=all", "-c", "advice.detachedHead=false",
	// A repository URL comes from another node: the transports that run
	// commands (ext::) stay off whatever the user's git config says.
	"-c", "protocol.allow=never", "-c", "protocol.ext.allow=never", "-c", "protocol.file.allow=always", "-c", "protocol.https.allow=always",
	"-c", "protocol.http.allow=always", "-c", "protocol.ssh.allow=always", "-c", "protocol.git.allow=always"}

// git runs git with args in dir (no dir: the process's) and returns its
// standard output; a failure carries its standard error.
func git(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append(slices.Clone(gitSafe), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// Snapshot describes the tree at root for a worker: its HEAD commit and
// the patch from it to the working tree, through a private index so the
// user's index is never touched. Files deny reports as unreadable stay
// out of the patch (they never leave this node).
func Snapshot(ctx context.Context, root string, deny tool.ReadDeny) (*Repo, error) {
	head, err := git(ctx, root, nil, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("cluster: %s has no commit a worker could check out: %w", root, err)
	}
	prefix, err := git(ctx, root, nil, nil, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	repo := &Repo{URLs: []string{root}, Commit: strings.TrimSpace(string(head)), Dir: strings.TrimSuffix(strings.TrimSpace(string(prefix)), "/")}
	if repo.Dir != "" {
		// The repository's top level, from which the commit is fetched.
		top, err := git(ctx, root, nil, nil, "rev-parse", "--show-toplevel")
		if err != nil {
			return nil, err
		}
		repo.URLs[0] = strings.TrimSpace(string(top))
	}
	if origin, err := git(ctx, root, nil, nil, "remote", "get-url", "origin"); err == nil {
		if u := strings.TrimSpace(string(origin)); u != "" {
			repo.URLs = append(repo.URLs, u)
		}
	}
	tmp, err := os.MkdirTemp("", "odin-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := git(ctx, root, env, nil, "read-tree", "HEAD"); err != nil {
		return nil, err
	}
	if _, err := git(ctx, root, env, nil, "add", "-A", "--", "."); err != nil {
		return nil, err
	}
	if deny != nil {
		names, err := git(ctx, root, env, nil, "diff", "--cached", "--name-only", "-z", "--no-renames", "HEAD")
		if err != nil {
			return nil, err
		}
		var hidden []string
		for _, n := range strings.Split(string(names), "\x00") {
			if n == "" {
				continue
			}
			if _, denied := deny.Check(filepath.Join(root, n)); denied {
				hidden = append(hidden, n)
			}
		}
		if len(hidden) > 0 {
			if _, err := git(ctx, root, env, nil, append([]string{"reset", "-q", "HEAD", "--"}, hidden...)...); err != nil {
				return nil, err
			}
		}
	}
	patch, err := git(ctx, root, env, nil, "diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", "--no-renames", "HEAD")
	if err != nil {
		return nil, err
	}
	if len(patch) > maxPatch {
		return nil, fmt.Errorf("cluster: the uncommitted changes of %s are %d KB, more than the %d KB a task may carry", root, len(patch)>>10, maxPatch>>10)
	}
	repo.Patch = patch
	return repo, nil
}

// Workspaces is a worker's cache of trees for remote specialists under
// Dir: each process works in a directory of its own, nodes/N (several
// nodes may share a state directory on one machine), holding a bare
// mirror per repository (mirrors/KEY.git) and a worktree per commit and
// patch (trees/KEY/COMMIT-PATCH). A tree is shared by the tasks that need
// the same one, and removed once unused for Keep. A process holds a lock
// on nodes/N.lock while it lives: the next node to start removes the
// directories whose lock is free (left by a process that was killed).
// Safe for concurrent use.
type Workspaces struct {
	Dir  string
	Keep time.Duration

	mu      sync.Mutex
	locks   map[string]*sync.Mutex // by mirror or tree path
	trees   map[string]*treeUse
	once    sync.Once
	own     string // nodes/N
	lock    *os.File
	openErr error
}

type treeUse struct {
	mirror string
	users  int
	last   time.Time
}

func (w *Workspaces) lockKey(key string) func() {
	w.mu.Lock()
	if w.locks == nil {
		w.locks = map[string]*sync.Mutex{}
	}
	l := w.locks[key]
	if l == nil {
		l = &sync.Mutex{}
		w.locks[key] = l
	}
	w.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// open makes this process's directory and removes those of processes
// that are gone (a killed worker leaves its trees behind).
func (w *Workspaces) open() error {
	nodes := filepath.Join(w.Dir, "nodes")
	if err := os.MkdirAll(nodes, 0o700); err != nil {
		return err
	}
	// The lock is taken under a name the sweep below never looks at, and
	// only then published as n-ID.lock: a node that starts at the same
	// moment would otherwise find this one's lock file before it is held,
	// take it, remove the directory as an orphan's, and make this node's
	// own lock fail (EAGAIN) while it held it.
	f, err := os.CreateTemp(nodes, "t-*.lock")
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		_ = os.Remove(f.Name())
		return fmt.Errorf("cluster: lock %s: %w", f.Name(), err)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f.Name()), "t-"), ".lock")
	own := filepath.Join(nodes, "n-"+id)
	if err := os.Rename(f.Name(), own+".lock"); err != nil {
		f.Close()
		_ = os.Remove(f.Name())
		return err
	}
	// A directory of that name can only be a dead node's: its lock is
	// the one just published, and this node holds it.
	_ = os.RemoveAll(own)
	if err := os.Mkdir(own, 0o700); err != nil {
		f.Close()
		_ = os.Remove(own + ".lock")
		return err
	}
	w.own, w.lock = own, f
	others, _ := filepath.Glob(filepath.Join(nodes, "n-*.lock"))
	for _, l := range others {
		dir := strings.TrimSuffix(l, ".lock")
		if dir == own {
			continue
		}
		lf, err := os.OpenFile(l, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			_ = os.RemoveAll(dir)
			_ = os.Remove(l)
		}
		lf.Close()
	}
	return nil
}

// Prepare returns a tree holding repo — its commit with its patch
// applied — and the function that says the caller is done with it.
func (w *Workspaces) Prepare(ctx context.Context, repo *Repo) (string, func(), error) {
	w.once.Do(func() { w.openErr = w.open() })
	if w.openErr != nil {
		return "", nil, w.openErr
	}
	if !commitID.MatchString(repo.Commit) || len(repo.URLs) == 0 {
		return "", nil, fmt.Errorf("cluster: a task's repository needs a commit ID and a URL (got %q, %d URLs)", repo.Commit, len(repo.URLs))
	}
	if repo.Dir != "" && !filepath.IsLocal(repo.Dir) {
		return "", nil, fmt.Errorf("cluster: a task's directory %q is not inside its repository", repo.Dir)
	}
	w.prune(ctx)
	key := hashOf([]byte(repo.URLs[0]))[:16]
	mirror := filepath.Join(w.own, "mirrors", key+".git")
	if err := w.fetch(ctx, mirror, repo); err != nil {
		return "", nil, err
	}
	tree := filepath.Join(w.own, "trees", key, repo.Commit[:16]+"-"+hashOf(repo.Patch)[:12])
	unlock := w.lockKey(tree)
	defer unlock()
	w.mu.Lock()
	use := w.trees[tree]
	w.mu.Unlock()
	if use == nil {
		if err := w.checkout(ctx, mirror, tree, repo); err != nil {
			return "", nil, err
		}
		use = &treeUse{mirror: mirror}
	}
	w.mu.Lock()
	if w.trees == nil {
		w.trees = map[string]*treeUse{}
	}
	w.trees[tree] = use
	use.users++
	w.mu.Unlock()
	var once sync.Once
	return tree, func() {
		once.Do(func() {
			w.mu.Lock()
			use.users--
			use.last = time.Now()
			w.mu.Unlock()
		})
	}, nil
}

// Scratch makes an empty directory private to one task in this process's
// directory (so a killed worker's go with the rest of it): the task's
// build cache, which the caller removes (removeTree) when the task ends.
func (w *Workspaces) Scratch() (string, error) {
	w.once.Do(func() { w.openErr = w.open() })
	if w.openErr != nil {
		return "", w.openErr
	}
	dir := filepath.Join(w.own, "scratch")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return os.MkdirTemp(dir, "task-")
}

// removeTree removes dir ("" is nothing), making read-only directories in
// it writable first when a plain removal fails (a Go module cache).
func removeTree(dir string) {
	if dir == "" || os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// fetch makes sure mirror holds repo.Commit.
func (w *Workspaces) fetch(ctx context.Context, mirror string, repo *Repo) error {
	unlock := w.lockKey(mirror)
	defer unlock()
	if _, err := os.Stat(mirror); err != nil {
		if err := os.MkdirAll(filepath.Dir(mirror), 0o700); err != nil {
			return err
		}
		if _, err := git(ctx, "", nil, nil, "init", "-q", "--bare", mirror); err != nil {
			return err
		}
	}
	has := func() bool {
		_, err := git(ctx, "", nil, nil, "--git-dir", mirror, "cat-file", "-e", repo.Commit+"^{commit}")
		return err == nil
	}
	if has() {
		return nil
	}
	var errs []error
	for _, u := range repo.URLs {
		// By ID first (protocol v2 serves any object); else every branch
		// and HEAD, which hold the commit when it is on one.
		_, err := git(ctx, "", nil, nil, "--git-dir", mirror, "fetch", "-q", "--no-tags", "--", u, repo.Commit)
		if err != nil {
			_, err = git(ctx, "", nil, nil, "--git-dir", mirror, "fetch", "-q", "--no-tags", "--", u,
				"+HEAD:refs/odin/head", "+refs/heads/*:refs/odin/heads/*")
		}
		if err == nil && has() {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %v", u, err))
	}
	return fmt.Errorf("cluster: no source of commit %s: %w", repo.Commit, errors.Join(errs...))
}

// checkout adds the worktree and applies the patch; a failure leaves no
// tree behind.
func (w *Workspaces) checkout(ctx context.Context, mirror, tree string, repo *Repo) (err error) {
	_ = os.RemoveAll(tree)
	if err := os.MkdirAll(filepath.Dir(tree), 0o700); err != nil {
		return err
	}
	if _, err := git(ctx, "", nil, nil, "--git-dir", mirror, "worktree", "add", "-q", "--detach", tree, repo.Commit); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			w.remove(ctx, mirror, tree)
		}
	}()
	if len(repo.Patch) > 0 {
		if _, err := git(ctx, tree, nil, repo.Patch, "apply", "--binary", "--whitespace=nowarn", "-"); err != nil {
			return fmt.Errorf("cluster: the uncommitted changes do not apply to %s: %w", repo.Commit, err)
		}
	}
	return nil
}

func (w *Workspaces) remove(ctx context.Context, mirror, tree string) {
	if _, err := git(ctx, "", nil, nil, "--git-dir", mirror, "worktree", "remove", "--force", tree); err != nil {
		_ = os.RemoveAll(tree)
		_, _ = git(ctx, "", nil, nil, "--git-dir", mirror, "worktree", "prune")
	}
}

// prune removes the trees no task has used for Keep.
func (w *Workspaces) prune(ctx context.Context) {
	keep := w.Keep
	if keep <= 0 {
		keep = 10 * time.Minute
	}
	w.mu.Lock()
	var old []string
	for tree, use := range w.trees {
		if use.users == 0 && time.Since(use.last) > keep {
			old = append(old, tree)
		}
	}
	w.mu.Unlock()
	for _, tree := range old {
		unlock := w.lockKey(tree)
		w.mu.Lock()
		use := w.trees[tree]
		gone := use != nil && use.users == 0 && time.Since(use.last) > keep
		if gone {
			delete(w.trees, tree)
		}
		w.mu.Unlock()
		if gone {
			w.remove(ctx, use.mirror, tree)
		}
		unlock()
	}
}

// Close removes this process's directory (the worker is leaving).
func (w *Workspaces) Close() {
	w.once.Do(func() { w.openErr = errors.New("cluster: workspaces closed") })
	w.mu.Lock()
	defer w.mu.Unlock()
	w.trees = nil
	if w.lock != nil {
		_ = os.RemoveAll(w.own)
		_ = os.Remove(w.own + ".lock")
		w.lock.Close()
		w.lock = nil
	}
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// pathMapper rewrites a worker's tree path to the session's root in what
// a remote specialist reports, so the session sees its own paths.
type pathMapper struct{ from, to []string }

func newPathMapper(tree, root string) pathMapper {
	var m pathMapper
	add := func(from string) {
		if from != "" && from != root && !slices.Contains(m.from, from) {
			m.from, m.to = append(m.from, from), append(m.to, root)
		}
	}
	// The resolved path first: it is the longer when the tree's
	// directory is reached through a symlink.
	if real, err := filepath.EvalSymlinks(tree); err == nil {
		add(real)
	}
	add(tree)
	return m
}

// with returns m that also maps from to to, ahead of the tree (reverse
// still maps into the tree).
func (m pathMapper) with(from, to string) pathMapper {
	if from == "" || from == to || slices.Contains(m.from, from) {
		return m
	}
	return pathMapper{from: append([]string{from}, m.from...), to: append([]string{to}, m.to...)}
}

// reverse maps the other way: the session's paths in a task's brief to
// the tree's, so the specialist can open the files it is pointed to.
func (m pathMapper) reverse() pathMapper {
	if len(m.from) == 0 {
		return m
	}
	// Into the tree as the worker names it (the last, unresolved form).
	return pathMapper{from: m.to[:1], to: m.from[len(m.from)-1:]}
}

func (m pathMapper) text(s string) string {
	for i, f := range m.from {
		s = replacePath(s, f, m.to[i])
	}
	return s
}

// replacePath replaces the path from with to in s where it stands as a
// whole path or a path's leading directories: /a/proj in "/a/proj/x.go"
// and "/a/proj:", not in "/a/project".
func replacePath(s, from, to string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, from)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(from)
		b.WriteString(s[:i])
		if end < len(s) && isPathChar(s[end]) {
			b.WriteString(from)
		} else {
			b.WriteString(to)
		}
		s = s[end:]
	}
}

func isPathChar(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// json rewrites the paths inside a JSON document's strings.
func (m pathMapper) json(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	s := string(raw)
	for i, f := range m.from {
		from, _ := json.Marshal(f)
		to, _ := json.Marshal(m.to[i])
		s = replacePath(s, strings.Trim(string(from), `"`), strings.Trim(string(to), `"`))
	}
	return json.RawMessage(s)
}

// delegate rewrites the paths of a task's brief, context and files.
func (m pathMapper) delegate(d *messages.Delegate) *messages.Delegate {
	cp := *d
	cp.Brief, cp.ContextText = m.text(d.Brief), m.text(d.ContextText)
	cp.Files = make([]string, len(d.Files))
	for i, f := range d.Files {
		cp.Files[i] = m.text(f)
	}
	if len(d.Files) == 0 {
		cp.Files = nil
	}
	// The files a writer may change (only_files) name the same files in
	// the tree, where its guard is rooted.
	cp.WriteFiles = nil
	for _, f := range d.WriteFiles {
		cp.WriteFiles = append(cp.WriteFiles, m.text(f))
	}
	return &cp
}

func (m pathMapper) report(r *messages.Report) *messages.Report {
	cp := *r
	cp.Summary, cp.Error = m.text(r.Summary), m.text(r.Error)
	cp.Result = m.json(r.Result)
	cp.Files = make([]string, len(r.Files))
	for i, f := range r.Files {
		cp.Files[i] = m.text(f)
	}
	if len(r.Files) == 0 {
		cp.Files = nil
	}
	return &cp
}

func (m pathMapper) progress(p *messages.AgentProgress) *messages.AgentProgress {
	cp := *p
	cp.Activities = make([]string, len(p.Activities))
	for i, a := range p.Activities {
		cp.Activities[i] = m.text(a)
	}
	return &cp
}

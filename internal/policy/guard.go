package policy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/odin-code/odin/internal/policy/approve"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// GuardOptions configure a Guard.
type GuardOptions struct {
	// AdditionalDirs are directories outside the root that tools may use
	// (permissions.additional_dirs and --add-dir). Relative ones are taken
	// against the root.
	AdditionalDirs []string
	// Protected are files or directories tools never write, wherever they
	// are: Odin's user config dir and its state dir (sessions, trust).
	Protected []string
	// Approver answers for paths outside the allowed directories. Nil
	// refuses them, as a headless run does.
	Approver Approver
	// TestFiles are further globs the Test agent may write
	// (quality.test_files).
	TestFiles []string
}

// Guard resolves and authorises the paths tools touch; it implements
// tool.PathGuard. A path is made absolute against the project root, its
// symlinks are resolved the way the kernel follows them (for a file that does
// not exist yet: its nearest existing ancestor), and the result is tested
// component-wise against the root and the additional directories, so
// /work/proj_evil is never inside /work/proj and a symlink cannot smuggle a
// write out of the project or into .git.
//
// Writes are refused, whoever asks and whatever was approved, to .git
// internals (any .git component), to .odin/ except .odin/plans/, to odin.yaml
// at the root and to the protected directories. A path outside the allowed
// directories needs approval. A Guard made for an agent by ForAgent also
// applies that agent's write filter (Test writes tests, Docs writes docs).
//
// A Guard is immutable and safe for concurrent use; guards derived from it
// share its Approver, so approvals remembered for the session apply to every
// agent of the session and no agent gets more than the session has.
type Guard struct {
	root      string
	dirs      []string
	protected []string
	approver  Approver
	origin    messages.Origin
	filter    *WriteFilter
	testFiles []string
}

var _ tool.PathGuard = (*Guard)(nil)

// NewGuard returns a Guard for the project at root, which must exist.
func NewGuard(root string, opts GuardOptions) (*Guard, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("policy: project root %q is not absolute", root)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("policy: project root: %w", err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("policy: project root %s is not a directory", root)
	}
	g := &Guard{root: real, approver: opts.Approver, origin: messages.Origin{Agent: "orchestrator"}, testFiles: opts.TestFiles}
	for _, d := range opts.AdditionalDirs {
		if strings.TrimSpace(d) == "" {
			return nil, errors.New("policy: permissions.additional_dirs: empty directory name")
		}
		if strings.HasPrefix(d, "~") {
			return nil, fmt.Errorf("policy: permissions.additional_dirs: %q: ~ is not expanded; give an absolute path", d)
		}
		rd, err := resolvePath(real, d)
		if err != nil {
			return nil, fmt.Errorf("policy: permissions.additional_dirs: %q: %w", d, err)
		}
		g.dirs = append(g.dirs, rd)
	}
	for _, p := range opts.Protected {
		if p == "" {
			continue
		}
		rp, err := resolvePath(real, p)
		if err != nil {
			return nil, fmt.Errorf("policy: protected path %q: %w", p, err)
		}
		g.protected = append(g.protected, rp)
		if lex := filepath.Clean(p); filepath.IsAbs(lex) && lex != rp {
			g.protected = append(g.protected, lex)
		}
	}
	return g, nil
}

// Root is the resolved project root.
func (g *Guard) Root() string { return g.root }

// Dirs are the resolved additional directories.
func (g *Guard) Dirs() []string { return append([]string(nil), g.dirs...) }

// ForAgent returns a Guard for one agent instance: approval requests name it,
// and the agent's built-in write filter (FilterFor) applies.
func (g *Guard) ForAgent(agent, taskID string) *Guard {
	c := *g
	c.origin = messages.Origin{Agent: agent, TaskID: taskID}
	if f := FilterFor(agent); f != nil {
		if f.TestCommandsOnly {
			f.Allow = append(f.Allow, g.testFiles...)
		}
		c.filter = f
	}
	return &c
}

// WithFilter returns a Guard whose writes are confined to f, for custom
// agents; a nil f returns g unchanged.
func (g *Guard) WithFilter(f *WriteFilter) *Guard {
	if f == nil {
		return g
	}
	c := *g
	c.filter = f
	return &c
}

// Resolve implements tool.PathGuard: it returns the resolved absolute path,
// asks the Approver for a path outside the allowed directories, and returns
// a *Denial for a refused path or a plain error for a malformed one.
func (g *Guard) Resolve(ctx context.Context, path string, access tool.Access) (string, error) {
	resolved, v, err := g.Check(path, access)
	if err != nil {
		return "", err
	}
	switch v.Action {
	case Allow:
		return resolved, nil
	case Deny:
		return "", approve.DenialOf(v, resolved, "")
	}
	req := Request{
		Kind:    KindPath,
		Subject: resolved,
		Access:  access,
		Origin:  g.origin,
	}
	if err := approve.RequestApproval(ctx, g.approver, req, v); err != nil {
		return "", err
	}
	return resolved, nil
}

// Check classifies path for access without asking anyone. It returns the
// resolved path and the verdict; the error is for malformed paths (empty,
// NUL bytes, "~", unresolvable).
func (g *Guard) Check(path string, access tool.Access) (string, Verdict, error) {
	if strings.TrimSpace(path) == "" {
		return "", Verdict{}, errors.New("empty path: give an absolute path inside the project")
	}
	if strings.HasPrefix(path, "~") {
		return "", Verdict{}, fmt.Errorf("path %q: ~ is not expanded; give an absolute path", path)
	}
	if access != tool.AccessRead && access != tool.AccessWrite {
		return "", Verdict{}, fmt.Errorf("unknown access %q", access)
	}
	resolved, err := resolvePath(g.root, path)
	if err != nil {
		return "", Verdict{}, fmt.Errorf("path %q: %w", path, err)
	}
	lexical := path
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(g.root, lexical)
	}
	return resolved, g.classify(filepath.Clean(lexical), resolved, access), nil
}

// classify decides access to resolved (reached from the cleaned absolute
// lexical path) without asking anyone.
func (g *Guard) classify(lexical, resolved string, access tool.Access) Verdict {
	var v Verdict
	if access == tool.AccessWrite {
		for _, p := range []string{resolved, lexical} {
			if why := g.protectedReason(p); why != "" {
				v.Add(Finding{Action: Deny, Rule: RuleProtected, Subject: p, Reason: why})
				return v
			}
		}
	}
	base := g.container(resolved)
	if access == tool.AccessWrite && g.filter != nil {
		rel := strings.TrimPrefix(resolved, string(filepath.Separator))
		if base != "" {
			rel, _ = filepath.Rel(base, resolved)
		}
		if !g.filter.allows(rel) {
			v.Add(Finding{Action: Deny, Rule: RuleAgentFilter, Subject: resolved, Reason: fmt.Sprintf(
				"the %s agent may write only %s (%s); %s is not one (rule %s)",
				g.filter.Agent, g.filter.Kind, g.filter.describe(), g.display(resolved), RuleAgentFilter)})
			return v
		}
	}
	if base == "" {
		via := ""
		if lexical != resolved {
			via = fmt.Sprintf(" (reached through a symlink from %s)", lexical)
		}
		v.Add(Finding{
			Action:  Ask,
			Rule:    RuleOutsideRoot,
			Subject: resolved,
			Key:     approve.PathKey(access, resolved),
			Reason: fmt.Sprintf("%s%s is outside the project root %s%s (rule %s); to allow it, run with --add-dir %s or add it to permissions.additional_dirs",
				resolved, via, g.root, g.dirsNote(), RuleOutsideRoot, suggestDir(resolved)),
		})
	}
	return v
}

// container returns the allowed directory holding p, or "".
func (g *Guard) container(p string) string {
	if workspace.Within(g.root, p) {
		return g.root
	}
	for _, d := range g.dirs {
		if workspace.Within(d, p) {
			return d
		}
	}
	return ""
}

// protectedReason says why writing p is never allowed, or "".
func (g *Guard) protectedReason(p string) string {
	for _, d := range g.protected {
		if workspace.Within(d, p) {
			return fmt.Sprintf("%s is part of Odin's own configuration or state (%s) and is never written by tools (rule %s)", p, d, RuleProtected)
		}
	}
	rel := strings.TrimPrefix(p, string(filepath.Separator))
	inRoot := workspace.Within(g.root, p)
	if inRoot {
		rel, _ = filepath.Rel(g.root, p)
	} else if base := g.container(p); base != "" {
		rel, _ = filepath.Rel(base, p)
	}
	comps := strings.Split(filepath.ToSlash(rel), "/")
	for _, c := range comps {
		if strings.EqualFold(c, ".git") {
			return fmt.Sprintf("%s is inside a .git directory: git internals (hooks, config, objects) are never written by tools (rule %s)", g.display(p), RuleProtected)
		}
	}
	if !inRoot || rel == "." {
		return ""
	}
	if strings.EqualFold(comps[0], ".odin") {
		if len(comps) > 2 && comps[1] == "plans" {
			return ""
		}
		return fmt.Sprintf("%s is an Odin policy file: only .odin/plans/ may be written by tools (rule %s)", g.display(p), RuleProtected)
	}
	if len(comps) == 1 && (strings.EqualFold(comps[0], "odin.yaml") || strings.EqualFold(comps[0], "odin.yml")) {
		return fmt.Sprintf("%s is the project's Odin configuration and is never written by tools (rule %s)", g.display(p), RuleProtected)
	}
	return ""
}

// display shows p relative to the root when inside it.
func (g *Guard) display(p string) string {
	if workspace.Within(g.root, p) {
		if rel, err := filepath.Rel(g.root, p); err == nil {
			return rel
		}
	}
	return p
}

func (g *Guard) dirsNote() string {
	if len(g.dirs) == 0 {
		return ""
	}
	return " and the additional directories " + strings.Join(g.dirs, ", ")
}

// suggestDir is the directory to name in --add-dir advice for p.
func suggestDir(p string) string {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return p
	}
	return filepath.Dir(p)
}

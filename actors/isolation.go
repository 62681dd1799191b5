package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/internal/worktree"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// An isolated specialist (Delegate.Isolation worktree) works in its own
// git worktree and reports its change as a patch, which the Orchestrator
// applies to the project under the session's path locks and change set
// (docs/workspaces.md).

// worktreeTimeout bounds creating, diffing or removing one worktree.
const worktreeTimeout = 2 * time.Minute

// worktreeReady carries a created worktree (or why not) back into the
// specialist.
type worktreeReady struct {
	tree *worktree.Tree
	err  error
}

// patchReady carries the report of an isolated specialist, its patch
// extracted and its worktree removed, back into it for sending.
type patchReady struct {
	report *messages.Report
}

// patchApplied carries the outcome of applying a run's patch back into
// the Orchestrator.
type patchApplied struct {
	run    *taskRun
	report *messages.Report
}

// isolated reports whether the task works in a worktree.
func (t *task) isolated() bool {
	return t.delegate.Isolation == messages.IsolationWorktree
}

// root is where the specialist works: its worktree's copy of the project
// when isolated.
func (s *specialist) root() string {
	if s.tree != nil {
		return s.tree.Root
	}
	return s.deps.Root
}

// startWorktree creates the task's worktree off the mailbox; a restarted
// specialist's earlier worktree is removed first, since the task starts
// again from the beginning.
func (s *specialist) startWorktree(c actor.Context, t *task) {
	mgr := s.deps.Worktrees
	if mgr == nil {
		s.t = t
		s.finishEarly(c, "isolation: worktree is not available in this session (no state directory for worktrees)")
		return
	}
	s.cell.mu.Lock()
	old := s.cell.tree
	s.cell.tree = nil
	s.cell.mu.Unlock()
	root, id := s.deps.Root, t.delegate.TaskID
	runAsync(c, context.Background(), func(ctx context.Context) any {
		ctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
		defer cancel()
		if old != nil {
			_ = old.Remove(ctx)
		}
		tree, err := mgr.Create(ctx, root, id)
		return &worktreeReady{tree: tree, err: err}
	})
}

func (s *specialist) onWorktreeReady(c actor.Context, msg *worktreeReady) {
	t := s.cell.task()
	if msg.err != nil {
		s.t = t
		why := msg.err.Error()
		if errors.Is(msg.err, worktree.ErrNotGit) {
			why = "isolation: worktree needs the project to be a git repository with at least one commit (" + why + "); delegate without isolation instead"
		}
		s.finishEarly(c, why)
		return
	}
	s.tree = msg.tree
	s.cell.mu.Lock()
	s.cell.tree = msg.tree
	s.cell.mu.Unlock()
	s.local = checkpoint.NewTracker(msg.tree.Root, "")
	s.begin(c, t)
}

// finishEarly fails a task that could not start.
func (s *specialist) finishEarly(c actor.Context, why string) {
	s.origin = messages.Origin{Agent: s.t.def.Name, TaskID: s.t.delegate.TaskID}
	s.started = s.deps.now()
	s.finish(c, messages.ReportFailed, "", why, nil)
}

// isolationNote tells the model where it works.
func isolationNote(project, tree string) string {
	return fmt.Sprintf("\n\nYou work in an isolated git worktree at %s: a private copy of the project %s (its last commit plus its uncommitted changes) made when your task started. "+
		"Paths under %s name the same files in your copy. Other agents may change the project meanwhile; your changes are returned as a patch and merged into the project when you report.",
		tree, project, project)
}

// finishIsolated extracts the patch of a successful task (a failed one's
// changes are dropped), removes the worktree, and sends the report with
// the patch and with the worktree's paths turned into the project's.
func (s *specialist) finishIsolated(c actor.Context, rep *messages.Report) {
	tree, project := s.tree, s.deps.Root
	runAsync(c, context.Background(), func(ctx context.Context) any {
		ctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
		defer cancel()
		if rep.Status == messages.ReportOK {
			p, err := tree.Patch(ctx)
			if err != nil {
				rep.Status, rep.Error = messages.ReportFailed, "could not collect the changes of the worktree: "+err.Error()
			} else {
				rep.Patch = p
			}
		}
		if err := tree.Remove(ctx); err != nil {
			s.deps.Log.Warn().Err(err).Str("task", rep.TaskID).Msg("worktree: remove")
		}
		mapReport(rep, tree.Root, project)
		return &patchReady{report: rep}
	})
}

// mapReport turns the worktree's paths of a report into the project's.
func mapReport(r *messages.Report, from, to string) {
	r.Summary = strings.ReplaceAll(r.Summary, from, to)
	r.Error = strings.ReplaceAll(r.Error, from, to)
	if len(r.Result) > 0 {
		f, _ := json.Marshal(from)
		t, _ := json.Marshal(to)
		r.Result = json.RawMessage(strings.ReplaceAll(string(r.Result), strings.Trim(string(f), `"`), strings.Trim(string(t), `"`)))
	}
	for i, p := range r.Files {
		if workspace.Within(from, p) {
			if rel, err := filepath.Rel(from, p); err == nil {
				r.Files[i] = filepath.Join(to, rel)
			}
		}
	}
}

// releaseWorktree removes the worktree of a specialist being stopped
// (timeout, cancel); safe when it is gone already.
func (s *specialist) releaseWorktree() {
	if tree := s.tree; tree != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), worktreeTimeout)
			defer cancel()
			_ = tree.Remove(ctx)
		}()
	}
}

// worktreeGuard is an isolated specialist's path guard: a path under the
// project is taken to mean the same file in the worktree, a worktree path
// is authorised as the project's path by the session's guard (protected
// files, write scopes, named files), and nothing resolves into the
// project itself, which only the patch changes.
type worktreeGuard struct {
	inner         tool.PathGuard
	project, tree string
}

// ProjectAlias is a path guard that knows the project under another
// name: a worker's guard takes the session's root for its copy of the
// session's tree, so that an isolated specialist there finds its
// worktree's files under the session's paths too, as it would at home.
type ProjectAlias interface {
	// ProjectPath returns path with the other name replaced by the
	// project's root (path unchanged when it is not under it).
	ProjectPath(path string) string
}

// denial is a refusal of the worktree guard.
type denial string

func (d denial) Error() string { return string(d) }

// Denied marks it a permission denial (tool.IsDenied).
func (denial) Denied() bool { return true }

func (g worktreeGuard) Resolve(ctx context.Context, path string, access tool.Access) (string, error) {
	if strings.TrimSpace(path) == "" || strings.HasPrefix(path, "~") {
		return g.inner.Resolve(ctx, path, access)
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.tree, p)
	}
	p = filepath.Clean(p)
	if a, ok := g.inner.(ProjectAlias); ok {
		p = a.ProjectPath(p)
	}
	if workspace.Within(g.project, p) && !workspace.Within(g.tree, p) {
		rel, _ := filepath.Rel(g.project, p)
		p = filepath.Join(g.tree, rel)
	}
	if !workspace.Within(g.tree, p) {
		resolved, err := g.inner.Resolve(ctx, p, access)
		if err == nil && access == tool.AccessWrite && workspace.Within(g.project, resolved) {
			return "", denial(fmt.Sprintf("%s is in the project, and this agent works in an isolated worktree: write its copy under %s instead", resolved, g.tree))
		}
		return resolved, err
	}
	resolved, err := workspace.Resolve(g.tree, p)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", path, err)
	}
	if !workspace.Within(g.tree, resolved) {
		if access == tool.AccessWrite && workspace.Within(g.project, resolved) {
			return "", denial(fmt.Sprintf("%s leads into the project through a symbolic link; this agent writes only its worktree %s", path, g.tree))
		}
		return g.inner.Resolve(ctx, resolved, access)
	}
	rel, _ := filepath.Rel(g.tree, resolved)
	if _, err := g.inner.Resolve(ctx, filepath.Join(g.project, rel), access); err != nil {
		return "", err
	}
	return resolved, nil
}

// Dirs are the inner guard's additional directories (the write tools
// write beneath them).
func (g worktreeGuard) Dirs() []string {
	if d, ok := g.inner.(interface{ Dirs() []string }); ok {
		return d.Dirs()
	}
	return nil
}

// worktreeDeny applies the session's read deny list, whose project rules
// are anchored at the project, to the worktree's copy of each path.
type worktreeDeny struct {
	inner         tool.ReadDeny
	project, tree string
}

func (d worktreeDeny) toProject(p string) string {
	if workspace.Within(d.tree, p) {
		if rel, err := filepath.Rel(d.tree, p); err == nil {
			return filepath.Join(d.project, rel)
		}
	}
	return p
}

func (d worktreeDeny) Check(path string) (string, bool) { return d.inner.Check(d.toProject(path)) }

func (d worktreeDeny) Hides(path string, typ fs.FileMode) bool {
	return d.inner.Hides(d.toProject(path), typ)
}

// applyPatch applies a run's patch off the mailbox; the report goes on
// (through complete) once it is in, or as a conflict.
func (o *Orchestrator) applyPatch(c actor.Context, run *taskRun, r *messages.Report) {
	run.reported = true
	if run.timer != nil {
		run.timer.Stop()
	}
	var tracker ChangeTracker
	if t := o.live(run.turn); t != nil && t.tracker != nil {
		tracker = t.tracker
	} else if run.delegate.ChangeSet != "" {
		tracker = o.host.changeSets.get(run.delegate.ChangeSet)
	}
	opts := worktree.ApplyOptions{Root: o.deps.Root, Locks: o.deps.Locks,
		Guard: confinedGuard(o.deps.Root, run.def, run.delegate, o.deps.Guard(run.def.Name, run.delegate.TaskID))}
	if tracker != nil {
		opts.BeforeWrite = tracker.BeforeWrite
		if iw, ok := tracker.(interface{ IntendWrite(string, []byte) error }); ok {
			opts.IntendWrite = iw.IntendWrite
		}
		if id, ok := tracker.(interface{ IntendDelete(string) error }); ok {
			opts.IntendDelete = id.IntendDelete
		}
	}
	mgr := o.deps.Worktrees
	o.deps.Bus.Publish(messages.AgentProgress{TaskID: r.TaskID, Agent: r.Agent, Activities: []string{"merging its patch into the project"}})
	runAsync(c, context.Background(), func(ctx context.Context) any {
		files, err := mgr.Apply(ctx, r.Patch, opts)
		return &patchApplied{run: run, report: patchOutcome(r, files, err)}
	})
}

// patchOutcome is the report the Orchestrator's model sees once the patch
// was applied (or not): the files it changed in the project, or the
// conflict naming the files.
func patchOutcome(r *messages.Report, files []string, err error) *messages.Report {
	cp := *r
	cp.Files = files
	var notes []string
	if p := r.Patch; p != nil && len(p.Skipped) > 0 {
		notes = append(notes, "not carried back from the worktree: "+strings.Join(p.Skipped, "; "))
	}
	cp.Patch = nil
	var ce *worktree.ConflictError
	switch {
	case errors.As(err, &ce):
		cp.Status = messages.ReportConflict
		cp.Conflict = &messages.PatchConflict{Files: ce.Files}
		cp.Files = nil
		notes = append(notes, fmt.Sprintf("its patch conflicts with changes made to the project meanwhile in %s; nothing of it was applied and the project is unchanged. "+
			"Delegate the task again (it will start from the project as it is now) or make the change yourself.", strings.Join(ce.Files, ", ")))
	case err != nil:
		cp.Status = messages.ReportFailed
		notes = append(notes, "its patch could not be applied: "+err.Error())
	}
	if len(notes) > 0 {
		if cp.Error != "" {
			notes = append([]string{cp.Error}, notes...)
		}
		cp.Error = strings.Join(notes, "\n")
	}
	return &cp
}

func (o *Orchestrator) onPatchApplied(c actor.Context, msg *patchApplied) {
	if o.tasks[msg.run.delegate.TaskID] != msg.run {
		return
	}
	o.complete(c, msg.run, msg.report)
}

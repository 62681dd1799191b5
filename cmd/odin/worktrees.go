package main

import (
	"context"
	"time"

	"github.com/odin-code/odin/internal/worktree"
)

// worktrees is the process's manager of isolated specialists' worktrees
// (docs/workspaces.md), nil without a state directory. The first use
// removes the worktrees left by Odin processes that died (kill -9, a
// crash): no ghost survives a restart.
func (a *app) worktrees() *worktree.Manager {
	a.worktreeOnce.Do(func() {
		if a.stateDir == "" {
			return
		}
		// Git runs in the session's sandbox like every process Odin
		// starts; each call may write only the repository's worktree
		// records and the worktree's own directory.
		m := worktree.New(worktree.Options{StateDir: a.stateDir, Launcher: a.sandbox()})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if removed, err := m.Sweep(ctx); err != nil {
			a.log.Warn().Err(err).Msg("worktree: removing orphans")
		} else if len(removed) > 0 {
			a.log.Info().Strs("removed", removed).Msg("worktree: removed the worktrees of dead processes")
		}
		a.worktreeMgr = m
		a.closers = append(a.closers, closerFunc(func() { _ = m.Close() }))
	})
	return a.worktreeMgr
}

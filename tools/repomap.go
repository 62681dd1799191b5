package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/repomap"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed repomap.md
var repoMapDescription string

// RepoMap budgets, in tokens.
const (
	repoMapMinBudget = 128
	repoMapMaxBudget = 8192
)

// RepoMapInput is RepoMap's input.
type RepoMapInput struct {
	Path   string   `json:"path,omitempty" jsonschema:"Directory or file (default: whole project)"`
	Budget int      `json:"budget_tokens,omitempty" jsonschema:"Map size"`
	Focus  []string `json:"focus,omitempty" jsonschema:"Identifiers to rank first"`
}

// RepoMapMeta is RepoMap's structured result.
type RepoMapMeta struct {
	Path       string `json:"path"`
	Tokens     int    `json:"tokens"`
	Shown      int    `json:"shown"`
	Total      int    `json:"total"`
	ShownFiles int    `json:"shown_files"`
	Files      int    `json:"files"`
	Parsed     int    `json:"parsed"`
}

// NewRepoMap returns RepoMap: a structural map of the code ranked by
// references (see internal/repomap), drawn from pool (a memory-only pool
// when nil). It reads files only.
func NewRepoMap(pool *repomap.Pool) tool.Tool {
	if pool == nil {
		pool = repomap.NewPool(repomap.Options{})
	}
	return newBuiltin[RepoMapInput](NameRepoMap, tool.ClassRead, repoMapDescription,
		func(ctx context.Context, env *tool.Env, in RepoMapInput) (tool.Result, error) {
			return runRepoMap(ctx, env, pool, in)
		},
		tool.WithSchema(func(s *jsonschema.Schema) {
			lo, hi := float64(repoMapMinBudget), float64(repoMapMaxBudget)
			s.Properties["budget_tokens"].Minimum = &lo
			s.Properties["budget_tokens"].Maximum = &hi
			setDefault(s, "budget_tokens", repomap.DefaultBudget)
		}))
}

func runRepoMap(ctx context.Context, env *tool.Env, pool *repomap.Pool, in RepoMapInput) (tool.Result, error) {
	target, bad, err := resolveSearchPath(ctx, env, "path", in.Path, false)
	if err != nil || bad != nil {
		return deref(bad), err
	}
	budget := in.Budget
	if budget == 0 {
		budget = repomap.DefaultBudget
	}
	budget = min(max(budget, repoMapMinBudget), repoMapMaxBudget)
	// The map covers the project root, so that references from all of it
	// count; a path in a directory added outside the root is mapped on its
	// own.
	root, scope := env.Root, ""
	if workspace.Within(env.Root, target) {
		if scope, err = filepath.Rel(env.Root, target); err != nil {
			return tool.Result{}, fmt.Errorf("tools: RepoMap: %w", err)
		}
	} else if info, err := os.Stat(target); err == nil && info.IsDir() {
		root = target
	} else {
		root, scope = filepath.Dir(target), filepath.Base(target)
	}
	res, err := pool.For(root).Map(ctx, repomap.Request{Scope: scope, Budget: budget, Focus: in.Focus})
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return tool.Result{}, err
	case err != nil:
		return tool.Errorf("cannot map %s: %v", target, err), nil
	}
	meta := RepoMapMeta{Path: target, Tokens: res.Tokens, Shown: res.Shown, Total: res.Total, ShownFiles: res.ShownFiles,
		Files: res.ScopeFiles, Parsed: res.Refresh.Parsed}
	if res.Total == 0 {
		return tool.Result{Output: fmt.Sprintf("No definitions found under %s: it holds no Go, Python, JavaScript, TypeScript, Rust or Java source files (or they are all ignored).", target), Meta: meta}, nil
	}
	return tool.Result{Output: res.Text, Meta: meta}, nil
}

package qa

import (
	"context"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/odin-code/odin/messages"
)

// Lint formats and lints files the Code specialist changed, before its
// Report: the formatter fixes what it can in place (gofmt -w, ruff format,
// rustfmt), then the linter reports what remains (go vet, ruff check,
// eslint, cargo clippy). Commands come from quality.format and
// quality.lint, else from the Commands section of the user's ODIN.md (and
// the project's once trusted), else they are detected from the files'
// languages. Every command runs in the sandbox through Run, like every QA
// check. files are absolute; those that no longer exist are skipped.
func (r *Runner) Lint(ctx context.Context, files []string) messages.LintReport {
	rep := messages.LintReport{Runs: []messages.LintRun{}, Clean: true, Passes: 1}
	var rel []string
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if p, err := filepath.Rel(r.Root, f); err == nil && !strings.HasPrefix(p, "..") {
			rel = append(rel, filepath.ToSlash(p))
		}
	}
	sort.Strings(rel)
	plan := r.lintPlan(rel)
	if len(plan) == 0 {
		rep.Note = "no formatter or linter is configured (quality.format, quality.lint) or detectable for these files"
		return rep
	}
	for _, step := range plan {
		before := hashes(r.Root, rel)
		ch := r.Run(ctx, messages.QACheck{Name: step.kind, Command: step.command})
		run := messages.LintRun{Kind: step.kind, Command: step.command, ExitCode: ch.ExitCode, Output: strings.TrimSpace(ch.Output)}
		run.Missing = ch.ExitCode == 127
		after := hashes(r.Root, rel)
		for _, f := range rel {
			if before[f] != after[f] {
				run.Fixed = append(run.Fixed, f)
			}
		}
		if !run.Missing && ch.ExitCode != 0 {
			rep.Clean = false
		}
		rep.Runs = append(rep.Runs, run)
	}
	return rep
}

type lintStep struct{ kind, command string }

// lintPlan picks the formatter and linter commands for the changed files.
func (r *Runner) lintPlan(rel []string) []lintStep {
	if len(rel) == 0 {
		return nil
	}
	var steps []lintStep
	if f := strings.TrimSpace(r.Quality.Format); f != "" {
		steps = append(steps, lintStep{"format", withFiles(f, rel)})
	}
	lint := strings.TrimSpace(r.Quality.Lint)
	if lint == "" {
		lint = r.instructionsLint()
	}
	if lint != "" {
		steps = append(steps, lintStep{"lint", lint})
	}
	if len(steps) > 0 {
		return steps
	}
	return r.detectLint(rel)
}

// instructionsLint is the lint command of the user's ODIN.md Commands,
// or the project's once it is trusted.
func (r *Runner) instructionsLint() string {
	texts := []string{r.Instructions}
	if r.ProjectTrusted {
		texts = append(texts, r.ProjectInstructions)
	}
	for _, t := range texts {
		for _, c := range FromInstructions(t) {
			if c.Name == "lint" {
				return c.Command
			}
		}
	}
	return ""
}

// detectLint chooses tools by the files' languages: gofmt and go vet for
// Go (always available with Go), ruff, rustfmt and clippy, eslint and
// prettier only when installed (on PATH, or in node_modules/.bin), since
// Odin must not download them.
func (r *Runner) detectLint(rel []string) []lintStep {
	byExt := map[string][]string{}
	for _, f := range rel {
		byExt[strings.ToLower(filepath.Ext(f))] = append(byExt[strings.ToLower(filepath.Ext(f))], f)
	}
	var steps []lintStep
	if gofiles := byExt[".go"]; len(gofiles) > 0 {
		steps = append(steps, lintStep{"format", withFiles("gofmt -l -w", gofiles)})
		if fileExists(filepath.Join(r.Root, "go.mod")) {
			steps = append(steps, lintStep{"lint", "go vet " + strings.Join(quoteAll(goPackages(gofiles)), " ")})
		}
	}
	if py := byExt[".py"]; len(py) > 0 && onPath("ruff") {
		steps = append(steps, lintStep{"format", withFiles("ruff format", py)}, lintStep{"lint", withFiles("ruff check --fix", py)})
	}
	if rs := byExt[".rs"]; len(rs) > 0 && fileExists(filepath.Join(r.Root, "Cargo.toml")) {
		if onPath("rustfmt") {
			steps = append(steps, lintStep{"format", withFiles("rustfmt", rs)})
		}
		if onPath("cargo-clippy") {
			steps = append(steps, lintStep{"lint", "cargo clippy --quiet"})
		}
	}
	var js []string
	for _, ext := range []string{".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs"} {
		js = append(js, byExt[ext]...)
	}
	sort.Strings(js)
	if len(js) > 0 && r.ProjectTrusted {
		// node_modules/.bin is the project's code: only once trusted.
		bin := filepath.Join(r.Root, "node_modules", ".bin")
		if fileExists(filepath.Join(bin, "prettier")) {
			steps = append(steps, lintStep{"format", withFiles("node_modules/.bin/prettier --write", js)})
		}
		if fileExists(filepath.Join(bin, "eslint")) {
			steps = append(steps, lintStep{"lint", withFiles("node_modules/.bin/eslint --fix", js)})
		}
	}
	return steps
}

// goPackages are the package patterns (./dir) of Go files.
func goPackages(files []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		d := "./" + filepath.ToSlash(filepath.Dir(f))
		if d == "./." {
			d = "."
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// withFiles puts the quoted files in place of {files}, or after cmd.
func withFiles(cmd string, files []string) string {
	list := strings.Join(quoteAll(files), " ")
	if strings.Contains(cmd, "{files}") {
		return strings.ReplaceAll(cmd, "{files}", list)
	}
	return cmd + " " + list
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			q = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = q
	}
	return out
}

func onPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

func hashes(root string, rel []string) map[string][sha256.Size]byte {
	out := make(map[string][sha256.Size]byte, len(rel))
	for _, f := range rel {
		if b, err := os.ReadFile(filepath.Join(root, f)); err == nil {
			out[f] = sha256.Sum256(b)
		}
	}
	return out
}

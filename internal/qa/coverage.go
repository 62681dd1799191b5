package qa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/messages"
)

// Change is one file of a change set as it was before: QA rebuilds the
// pre-change tree from these to measure the coverage baseline.
type Change struct {
	// Path is relative to the root.
	Path string
	// Before is the content before the change; Existed is false for a
	// file the change created.
	Before  []byte
	Existed bool
}

// Coverage limits: the pre-change copy of the project is skipped (the
// baseline reported missing) beyond these.
const (
	coverageMaxFiles = 20000
	coverageMaxBytes = 256 << 20
)

// goCoverageRe reads `go test -cover` lines: "ok  	mod/pkg	0.1s	coverage:
// 75.0% of statements" and "	mod/pkg		coverage: 0.0% of statements".
var goCoverageRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(?:ok\s+|\s*)(\S+)\s.*?coverage: ([0-9.]+)% of statements`)
})

// Coverage measures the test coverage of the packages the change touched,
// before and after: after in the project itself, before in a copy of the
// project with the changed files restored from changes (a real run on the
// pre-change tree, not an estimate). The command is quality.coverage
// ({packages} replaced by the changed packages), else `go test -cover` for
// a Go module; nil when there is none or it is "off". Both runs go through
// the sandbox; the copy is read-only to the command.
func (r *Runner) Coverage(ctx context.Context, changes []Change) *messages.CoverageReport {
	cmdTmpl := strings.TrimSpace(r.Quality.Coverage)
	if cmdTmpl == "off" {
		return nil
	}
	if cmdTmpl == "" {
		if !fileExists(filepath.Join(r.Root, "go.mod")) {
			return nil
		}
		cmdTmpl = "go test -cover {packages}"
	}
	var gofiles []string
	for _, c := range changes {
		if strings.HasSuffix(c.Path, ".go") {
			gofiles = append(gofiles, filepath.ToSlash(c.Path))
		}
	}
	pkgs := goPackages(gofiles)
	if len(pkgs) == 0 {
		return nil
	}
	command := cmdTmpl
	if strings.Contains(command, "{packages}") {
		command = strings.ReplaceAll(command, "{packages}", strings.Join(quoteAll(pkgs), " "))
	}
	rep := &messages.CoverageReport{Command: command}
	after, err := r.coverageIn(ctx, r.Root, command)
	if err != nil {
		rep.Note = "after the change: " + err.Error()
	}
	var before map[string]float64
	dir, cleanup, err := r.baselineTree(changes)
	if err != nil {
		rep.Note = joinNote(rep.Note, "no baseline: "+err.Error())
	} else {
		defer cleanup()
		if before, err = r.coverageIn(ctx, dir, command); err != nil {
			rep.Note = joinNote(rep.Note, "before the change: "+err.Error())
		}
	}
	names := map[string]bool{}
	for p := range after {
		names[p] = true
	}
	for p := range before {
		names[p] = true
	}
	var sorted []string
	for p := range names {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	for _, p := range sorted {
		pc := messages.PackageCoverage{Package: p}
		if v, ok := before[p]; ok {
			pc.Before = &v
		}
		if v, ok := after[p]; ok {
			pc.After = &v
		}
		rep.Packages = append(rep.Packages, pc)
	}
	return rep
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// coverageIn runs the coverage command in dir and parses per-package
// percentages. A failing command still yields the packages it measured.
func (r *Runner) coverageIn(ctx context.Context, dir, command string) (map[string]float64, error) {
	timeout := r.Quality.CheckTimeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	spec := sandbox.Spec{Args: []string{"bash", "-c", command}, Dir: dir,
		Env: []string{"NO_COLOR=1", "TERM=dumb", "CI=1", "ODIN=1"}, Write: dir == r.Root, Agent: "qa"}
	if dir != r.Root {
		spec.Visible = []string{dir}
	}
	out, code, err := r.runSpec(ctx, spec)
	if err != nil {
		return nil, err
	}
	res := map[string]float64{}
	for _, m := range goCoverageRe().FindAllStringSubmatch(out, -1) {
		if v, err := strconv.ParseFloat(m[2], 64); err == nil {
			res[m[1]] = v
		}
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("`%s` exited %d and reported no coverage: %s", command, code, firstLines(out, 3))
	}
	return res, nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

// baselineTree copies the project (without hidden directories and
// node_modules) to a temporary directory and puts back the changed files
// as they were, removing those the change created.
func (r *Runner) baselineTree(changes []Change) (string, func(), error) {
	dir, err := os.MkdirTemp("", "odin-coverage-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	files, size := 0, int64(0)
	err = filepath.WalkDir(r.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.Root, p)
		if d.IsDir() {
			// Hidden directories (.git, .odin, caches) and dependencies
			// are no part of what the tests measure.
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		size += info.Size()
		if files > coverageMaxFiles || size > coverageMaxBytes {
			return errors.New("the project is too large to copy for a baseline")
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, info.Mode().Perm())
	})
	if err != nil {
		cleanup()
		return "", nil, err
	}
	for _, c := range changes {
		dst := filepath.Join(dir, filepath.FromSlash(c.Path))
		if !strings.HasPrefix(dst, dir+string(filepath.Separator)) {
			continue
		}
		if !c.Existed {
			os.Remove(dst)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			cleanup()
			return "", nil, err
		}
		if err := os.WriteFile(dst, c.Before, 0o644); err != nil {
			cleanup()
			return "", nil, err
		}
	}
	return dir, cleanup, nil
}

// CoverageDrops lists the packages whose coverage fell, as warnings.
func CoverageDrops(rep *messages.CoverageReport) []string {
	if rep == nil {
		return nil
	}
	var out []string
	for _, p := range rep.Packages {
		if p.Before != nil && p.After != nil && *p.After < *p.Before-0.05 {
			out = append(out, fmt.Sprintf("coverage of %s dropped from %.1f%% to %.1f%% (%s)", p.Package, *p.Before, *p.After, rep.Command))
		}
	}
	return out
}

// defaultTimeout bounds a coverage run when quality.check_timeout is unset.
const defaultTimeout = 5 * time.Minute

// runSpec runs spec in the sandbox and returns its combined output (the
// tail) and exit code; err is set when it could not run or timed out.
func (r *Runner) runSpec(ctx context.Context, spec sandbox.Spec) (string, int, error) {
	proc, err := r.Launcher.Command(ctx, spec)
	if err != nil {
		return "", -1, err
	}
	defer proc.Release()
	var out bytes.Buffer
	proc.Cmd.Stdout, proc.Cmd.Stderr = &out, &out
	proc.Cmd.WaitDelay = 2 * time.Second
	err = proc.Cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return out.String(), -1, fmt.Errorf("stopped: %w", ctx.Err())
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode(), nil
	case err != nil:
		return out.String(), -1, err
	}
	return out.String(), 0, nil
}

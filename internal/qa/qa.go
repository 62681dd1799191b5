package qa

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/messages"
)

// Runner finds and runs the checks of the project at Root.
type Runner struct {
	Root    string
	Quality config.Quality
	// Instructions is the user's own instruction text (their ODIN.md),
	// searched for a Commands section when odin.yaml names no checks.
	Instructions string
	// ProjectInstructions is the project's instruction text (ODIN.md,
	// AGENTS.md, CLAUDE.md), searched after Instructions, but only when
	// ProjectTrusted: its Commands section is project code.
	ProjectInstructions string
	// ProjectTrusted says the user trusted the project (`odin trust`):
	// only then do checks come from the project's ODIN.md Commands, its
	// package.json scripts or its Makefile targets (see TrustItems). The
	// command lines Odin writes itself (go test ./..., cargo test) run
	// either way, in the sandbox like every check.
	ProjectTrusted bool
	// Timeout bounds each check (default 5 minutes).
	Timeout time.Duration
	// TailBytes is how much of a check's output is kept (default 4000).
	TailBytes int
	// Launcher runs the checks in the session's sandbox, with edit-mode
	// rights (the root writable except .git, .odin and odin.yaml); nil runs
	// them unconfined with a filtered environment.
	Launcher *sandbox.Launcher
}

// Checks returns the checks to run, in order build, lint, test.
func (r *Runner) Checks(context.Context) []messages.QACheck {
	q := r.Quality
	if q.Build != "" || q.Lint != "" || q.Test != "" {
		return named([][2]string{{"build", q.Build}, {"lint", q.Lint}, {"test", q.Test}})
	}
	if c := FromInstructions(r.Instructions); len(c) > 0 {
		return c
	}
	if r.ProjectTrusted {
		if c := FromInstructions(r.ProjectInstructions); len(c) > 0 {
			return c
		}
	}
	checks, scripts := detect(r.Root)
	if len(scripts) > 0 && !r.ProjectTrusted {
		return nil
	}
	return checks
}

// TrustItems lists the check commands the project itself writes — the
// Commands section of its instruction text, the package.json scripts or
// Makefile targets detection would run — which wait for `odin trust`.
// instrFile names the file the instruction text came from.
func TrustItems(root, instrFile, projectInstructions string) []config.TrustItem {
	var items []config.TrustItem
	for _, c := range FromInstructions(projectInstructions) {
		items = append(items, config.TrustItem{Key: instrFile + " ## Commands " + c.Name, Value: strconv.Quote(c.Command)})
	}
	_, scripts := detect(root)
	return append(items, scripts...)
}

func named(pairs [][2]string) []messages.QACheck {
	var out []messages.QACheck
	for _, p := range pairs {
		if strings.TrimSpace(p[1]) != "" {
			out = append(out, messages.QACheck{Name: p[0], Command: p[1], Required: true})
		}
	}
	return out
}

var (
	headingRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#{1,6}\s+(.*)$`) })
	codeRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`]+)`") })
)

// FromInstructions extracts build, lint and test commands from the
// Commands section of an ODIN.md: list items or table rows whose inline
// code is a command and whose text names its purpose.
func FromInstructions(md string) []messages.QACheck {
	section := ""
	locs := headingRe().FindAllStringSubmatchIndex(md, -1)
	for i, l := range locs {
		title := strings.ToLower(md[l[2]:l[3]])
		if strings.Contains(title, "command") {
			end := len(md)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			section = md[l[1]:end]
			break
		}
	}
	if section == "" {
		return nil
	}
	found := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		m := codeRe().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cmd := strings.TrimSpace(m[1])
		low := strings.ToLower(line)
		for _, kind := range []string{"build", "lint", "test"} {
			if _, ok := found[kind]; ok {
				continue
			}
			if strings.Contains(low, kind) || (kind == "lint" && (strings.Contains(low, "vet") || strings.Contains(low, "check"))) {
				found[kind] = cmd
				break
			}
		}
	}
	return named([][2]string{{"build", found["build"]}, {"lint", found["lint"]}, {"test", found["test"]}})
}

// Detect guesses checks from the project's files.
func Detect(root string) []messages.QACheck {
	checks, _ := detect(root)
	return checks
}

// detect guesses checks from the project's files; scripts describes the
// ones whose commands the project wrote (package.json scripts, Makefile
// recipes), with those commands, for the trust rule.
func detect(root string) (checks []messages.QACheck, scripts []config.TrustItem) {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(root, name))
		return err == nil
	}
	switch {
	case exists("go.mod"):
		return named([][2]string{{"build", "go build ./..."}, {"lint", "go vet ./..."}, {"test", "go test ./..."}}), nil
	case exists("package.json"):
		return npmChecks(root)
	case exists("Cargo.toml"):
		return named([][2]string{{"build", "cargo build"}, {"test", "cargo test"}}), nil
	case exists("pyproject.toml") || exists("setup.py") || exists("pytest.ini"):
		return named([][2]string{{"test", "python -m pytest -q"}}), nil
	case exists("Makefile"):
		data, _ := os.ReadFile(filepath.Join(root, "Makefile"))
		var pairs [][2]string
		for _, target := range []string{"build", "lint", "test"} {
			re := regexp.MustCompile(`(?m)^` + target + `[ \t]*:[^\n]*\n?((?:\t[^\n]*\n?)*)`)
			if m := re.FindSubmatch(data); m != nil {
				pairs = append(pairs, [2]string{target, "make " + target})
				recipe := strings.ReplaceAll(strings.TrimSpace(string(m[1])), "\n\t", "; ")
				scripts = append(scripts, config.TrustItem{Key: "Makefile " + target, Value: strconv.Quote(recipe)})
			}
		}
		return named(pairs), scripts
	}
	return nil, nil
}

func npmChecks(root string) ([]messages.QACheck, []config.TrustItem) {
	data, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return nil, nil
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return nil, nil
	}
	runner := "npm run"
	switch {
	case fileExists(filepath.Join(root, "pnpm-lock.yaml")):
		runner = "pnpm run"
	case fileExists(filepath.Join(root, "yarn.lock")):
		runner = "yarn run"
	case fileExists(filepath.Join(root, "bun.lockb")) || fileExists(filepath.Join(root, "bun.lock")):
		runner = "bun run"
	}
	var pairs [][2]string
	var scripts []config.TrustItem
	for _, s := range []string{"build", "lint", "typecheck", "test"} {
		if script, ok := pkg.Scripts[s]; ok {
			pairs = append(pairs, [2]string{s, runner + " " + s})
			scripts = append(scripts, config.TrustItem{Key: "package.json scripts." + s, Value: strconv.Quote(script)})
		}
	}
	return named(pairs), scripts
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Run runs one check with bash in the project root, inside the sandbox.
// Everything the check started is killed when it times out or ctx ends.
func (r *Runner) Run(ctx context.Context, c messages.QACheck) messages.QACheck {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = r.Quality.CheckTimeout
	}
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	tail := r.TailBytes
	if tail <= 0 {
		tail = 4000
	}
	parent := ctx
	started := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A check is project code (a test the model wrote, say): it runs in
	// the sandbox like any command, and everything it starts dies with it.
	proc, err := r.Launcher.Command(ctx, sandbox.Spec{Args: []string{"bash", "-c", c.Command}, Dir: r.Root,
		Env: []string{"NO_COLOR=1", "TERM=dumb", "CI=1", "ODIN=1"}, Write: true, Agent: "qa"})
	if err != nil {
		c.ExitCode, c.Output = -1, fmt.Sprintf("[odin: %v]", err)
		return c
	}
	defer proc.Release()
	cmd := proc.Cmd
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	c.ExitCode = 0
	c.Output = tailOf(out.String(), tail)
	var ee *exec.ExitError
	switch {
	case parent.Err() != nil:
		// Stopped from outside (the turn was cancelled): say so, not that
		// the check ran out of its own time, so one outcome is told.
		c.ExitCode = -1
		c.Output += fmt.Sprintf("\n[odin: check stopped after %s: %s]", time.Since(started).Round(time.Second), stopCause(parent.Err()))
	case ctx.Err() != nil:
		c.ExitCode = -1
		c.Output += fmt.Sprintf("\n[odin: check stopped at its time limit of %s (quality.check_timeout)]", timeout)
	case errors.As(err, &ee):
		c.ExitCode = ee.ExitCode()
	case err != nil:
		c.ExitCode = -1
		c.Output += fmt.Sprintf("\n[odin: %v]", err)
	}
	c.Passed = c.ExitCode == 0
	return c
}

// stopCause says why a caller's context ended a check.
func stopCause(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the run it belonged to reached its deadline"
	}
	return "cancelled"
}

func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut++
	}
	return fmt.Sprintf("[… %d earlier bytes]\n", cut) + s[cut:]
}

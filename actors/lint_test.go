package actors

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// fakeLinter reports findings on its first pass and a clean second pass.
type fakeLinter struct {
	mu    sync.Mutex
	calls [][]string
}

func (f *fakeLinter) Lint(_ context.Context, files []string) messages.LintReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, files)
	if len(f.calls) == 1 {
		return messages.LintReport{Runs: []messages.LintRun{{Kind: "lint", Command: "vet notes.txt", ExitCode: 1, Output: "notes.txt:1: finding"}}}
	}
	return messages.LintReport{Runs: []messages.LintRun{{Kind: "lint", Command: "vet notes.txt"}}, Clean: true}
}

func (f *fakeLinter) n() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func lintScript() *llmtest.Script {
	return llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("code", "write notes", "write notes.txt in {{root}}")),
			llmtest.Step{When: "specialist finished", Text: "done"}).
		Add("code",
			llmtest.Calls(llmtest.Call("Write", map[string]any{"path": "{{root}}/notes.txt", "content": "x\n"})),
			report(map[string]any{"task": "notes", "summary": "wrote notes"}),
			llmtest.Step{When: "Odin formatted and linted", ToolCalls: report(map[string]any{"task": "notes", "summary": "fixed the finding"}).ToolCalls})
}

// Code's report waits for a lint pass; findings give the model one more
// turn, the second pass is final and its outcome goes with the report.
func TestCodeLintsBeforeReport(t *testing.T) {
	lint := &fakeLinter{}
	h := newHarness(t, lintScript(), func(d *Deps) { d.Lint = lint }, codeWrites)
	h.sess.Submit("write notes", messages.ModeEdit)
	fin, _ := next[messages.AgentFinished](h)
	h.turn()
	if lint.n() != 2 {
		t.Fatalf("lint passes = %d, want 2", lint.n())
	}
	if got := lint.calls[0]; len(got) != 1 || !strings.HasSuffix(got[0], "notes.txt") {
		t.Errorf("linted files = %v", got)
	}
	reqs := h.client.RequestsFor("code")
	if len(reqs) != 3 {
		t.Fatalf("code made %d model calls, want 3 (write, report, fix after lint)", len(reqs))
	}
	last := reqs[2].Messages[len(reqs[2].Messages)-1].Content
	if !strings.Contains(last, "vet notes.txt") || !strings.Contains(last, "notes.txt:1: finding") {
		t.Errorf("the model was not given the findings:\n%s", last)
	}
	var cr messages.CodeResult
	if err := json.Unmarshal(fin.Report.Result, &cr); err != nil {
		t.Fatal(err)
	}
	if cr.Lint == nil || cr.Lint.Passes != 2 || !cr.Lint.Clean || len(cr.Lint.Runs) != 2 || !cr.LintPassed {
		t.Errorf("report's lint = %+v (lint_passed %v)", cr.Lint, cr.LintPassed)
	}
}

// quality.code_lint: off skips the step.
func TestCodeLintOff(t *testing.T) {
	lint := &fakeLinter{}
	h := newHarness(t, lintScript(), func(d *Deps) { d.Lint = lint }, withConfig(func(c *config.Config) { c.Quality.CodeLint = "off" }), codeWrites)
	h.sess.Submit("write notes", messages.ModeEdit)
	fin, _ := next[messages.AgentFinished](h)
	h.turn()
	if lint.n() != 0 {
		t.Errorf("lint ran %d times with code_lint off", lint.n())
	}
	var cr messages.CodeResult
	_ = json.Unmarshal(fin.Report.Result, &cr)
	if cr.Lint != nil {
		t.Errorf("lint = %+v", cr.Lint)
	}
}

// codeWrites gives the Code agent the harness's real file writer.
func codeWrites(d *Deps) {
	d.Config.Agents = map[string]config.Agent{"code": {Tools: []string{"Write"}}}
}

// slowLinter runs past the Code agent's deadline and its grace, as a
// first build on a cold cache does on a loaded machine.
type slowLinter struct {
	wait      time.Duration
	cancelled bool
}

func (f *slowLinter) Lint(ctx context.Context, _ []string) messages.LintReport {
	select {
	case <-ctx.Done():
		f.cancelled = true
		return messages.LintReport{Runs: []messages.LintRun{{Kind: "lint", Command: "vet", ExitCode: 1, Output: "killed"}}}
	case <-time.After(f.wait):
	}
	return messages.LintReport{Runs: []messages.LintRun{{Kind: "lint", Command: "vet"}}, Clean: true, Passes: 1}
}

// Checks after the model's report do not count against the deadline: a
// lint pass that outlasts it leaves the report ok, recorded as ok in the
// registry as in the report.
func TestChecksAfterReportOutlastDeadline(t *testing.T) {
	const deadline = 500 * time.Millisecond
	lint := &slowLinter{wait: deadline + taskGrace + time.Second}
	h := newHarness(t, lintScript(), func(d *Deps) { d.Lint = lint }, withConfig(func(c *config.Config) {
		c.Agents = map[string]config.Agent{"code": {Tools: []string{"Write"}, Timeout: deadline, MaxTimeout: deadline}}
	}))
	h.sess.Submit("write notes", messages.ModeEdit)
	fin, _ := next[messages.AgentFinished](h)
	h.turn()
	if fin.Report.Status != messages.ReportOK {
		t.Fatalf("report status = %s (%s); want ok: the checks after the report ran past the deadline", fin.Report.Status, fin.Report.Error)
	}
	if lint.cancelled {
		t.Error("the lint pass was cancelled at the deadline")
	}
	runs, err := h.sess.AgentRuns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		if run.Agent == "code" && run.Status != messages.AgentRunStatus(messages.ReportOK) {
			t.Errorf("agent run registry says %s for code; the report said ok", run.Status)
		}
	}
}

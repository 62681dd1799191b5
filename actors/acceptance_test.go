package actors

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/gates"
	"github.com/odin-code/odin/messages"
)

func TestJudgeCriteria(t *testing.T) {
	todos := []messages.Todo{
		{ID: "1", Content: "add Max", Status: "completed", Acceptance: []messages.AcceptanceCriterion{
			{Criterion: "tests pass", Command: "go test ./..."},
			{Criterion: "Max is documented"},
			{Criterion: "no panics on empty input"},
			{Criterion: "lint clean", Command: "go vet ./..."},
		}},
		{ID: "2", Content: "later", Status: "pending", Acceptance: []messages.AcceptanceCriterion{{Criterion: "not yet"}}},
	}
	crit := criteriaOf(todos)
	if len(crit) != 4 {
		t.Fatalf("criteria of a pending item were included: %d", len(crit))
	}
	checks := criterionChecks(crit)
	if len(checks) != 2 || checks[0].Command != "go test ./..." || checks[1].Command != "go vet ./..." {
		t.Fatalf("checks = %+v", checks)
	}
	checks[0].Passed, checks[0].ExitCode = true, 0
	checks[1].Passed, checks[1].ExitCode, checks[1].Output = false, 1, "a.go:3: bad\nmore"
	review := &messages.ReviewResult{Criteria: []messages.CriterionVerdict{{Criterion: "  max IS documented ", Met: true, Evidence: "doc comment"}}}
	got := judgeCriteria(crit, checks, review)
	want := []messages.CriterionResult{
		{Todo: "add Max", Criterion: "tests pass", Command: "go test ./...", Met: true, By: "command", Evidence: "`go test ./...` exited 0"},
		{Todo: "add Max", Criterion: "Max is documented", Met: true, By: "review", Evidence: "doc comment"},
		{Todo: "add Max", Criterion: "no panics on empty input", By: "none", Evidence: "no reviewer verdict for this criterion"},
		{Todo: "add Max", Criterion: "lint clean", Command: "go vet ./...", By: "command", Evidence: "`go vet ./...` exited 1: a.go:3: bad"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("judgeCriteria (-want +got):\n%s", diff)
	}
	q := &messages.QAResult{Passed: true}
	applyAcceptance(q, got, nil)
	if q.Passed || len(q.Blockers) != 2 || !strings.Contains(q.Blockers[0], "no panics on empty input") {
		t.Errorf("unmet criteria must block: %+v", q)
	}
	if b := acceptanceBrief(todos); !strings.Contains(b, "Max is documented") || strings.Contains(b, "tests pass") || strings.Contains(b, "not yet") {
		t.Errorf("the review brief lists the wrong criteria:\n%s", b)
	}
}

func TestDecideRefactorAndAcceptance(t *testing.T) {
	d := gates.Decide(gates.ChangeFacts{Files: []string{"main.go"}, Refactors: []string{"renamed exported identifier A → B (main.go)"}})
	if !d.ReviewRequired || !d.QARequired || d.Reasons[0] != "significant refactor: renamed exported identifier A → B (main.go)" {
		t.Errorf("a single-file rename must force the gates: %+v", d)
	}
	d = gates.Decide(gates.ChangeFacts{Files: []string{"notes.txt"}, Acceptance: 2})
	if !d.ReviewRequired || d.Reasons[0] != "acceptance criteria to verify: 2" {
		t.Errorf("acceptance criteria must force QA: %+v", d)
	}
	if d := gates.Decide(gates.ChangeFacts{Files: []string{"notes.txt"}}); d.ReviewRequired {
		t.Errorf("a plain single-file change was gated: %+v", d)
	}
}

// TestQABlockersKeepCriteria: QA's own blockers join Odin's unmet
// criteria; they never replace them, and the brief lists each unmet one.
func TestQABlockersKeepCriteria(t *testing.T) {
	q := &messages.QAResult{Passed: true}
	applyAcceptance(q, []messages.CriterionResult{
		{Todo: "add Min", Criterion: "Min exists", Command: "grep -q Min x.go", By: "command", Evidence: "exited 1"},
		{Todo: "add Min", Criterion: "Min is documented", Met: true, By: "review", Evidence: "ok"},
	}, nil)
	got := mergeBlockers(q.Blockers, []string{"Max has no test", " ", q.Blockers[0]})
	want := []string{"acceptance criterion not met: Min exists (exited 1)", "Max has no test"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("blockers (-want +got):\n%s", diff)
	}
	text := unmetCriteriaText(q.Criteria)
	if !strings.Contains(text, "- Min exists (todo: add Min; check: `grep -q Min x.go`; exited 1)") || strings.Contains(text, "documented") {
		t.Errorf("unmet criteria text:\n%s", text)
	}
}

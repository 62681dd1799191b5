package gates

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

// Events for the table, named after what happened.
var (
	gated     = ChangeFacts{Files: []string{"a.go", "b.go"}}    // two files: review and QA required
	ungated   = ChangeFacts{Files: []string{"internal/x/x.go"}} // one low-risk file
	criterion = ChangeFacts{Files: []string{"notes.txt"}, Acceptance: 1}

	start          = Event{Kind: EventStart, Facts: gated}
	approved       = reviewed(messages.ReviewResult{Approved: true, Summary: "fine"})
	approvedMinor  = reviewed(messages.ReviewResult{Approved: true, Issues: []messages.ReviewIssue{{Severity: "minor", Message: "nit"}}})
	rejected       = reviewed(messages.ReviewResult{Approved: true, Issues: []messages.ReviewIssue{{Severity: "critical", File: "a.go", Line: 3, Message: "nil deref"}}})
	rejectedOddSev = reviewed(messages.ReviewResult{Approved: true, Issues: []messages.ReviewIssue{{Severity: "high", File: "a.go", Message: "race"}}})
	notApproved    = reviewed(messages.ReviewResult{Approved: false, Summary: "wrong approach"})
	reviewBudget   = Event{Kind: EventReviewed, Report: &messages.Report{Status: messages.ReportBudget, Summary: "token budget exceeded"}}
	reviewFailed   = Event{Kind: EventReviewed, Report: &messages.Report{Status: messages.ReportFailed, Summary: "crashed"}}
	testsGreen     = tested(messages.TestResult{Passed: 3})
	testsRed       = tested(messages.TestResult{Passed: 2, Failed: 1, Failures: []messages.TestFailure{{Test: "TestMax", Message: "got 1 want 2"}}})
	testsBudget    = Event{Kind: EventTested, Report: &messages.Report{Status: messages.ReportBudget, Summary: "stopped by budget"}}
	checksGreen    = Event{Kind: EventChecked, Passed: true}
	checksRed      = Event{Kind: EventChecked, Problems: "go test failed (exit 1)"}
	diagnosed      = Event{Kind: EventDiagnosed, Problems: "go test failed (exit 1): max.go:3 off by one"}
	fixed          = Event{Kind: EventFixed}
)

func reviewed(r messages.ReviewResult) Event {
	raw, _ := json.Marshal(r)
	return Event{Kind: EventReviewed, Report: &messages.Report{Status: messages.ReportOK, Result: raw}, Review: &r}
}

func tested(r messages.TestResult) Event {
	raw, _ := json.Marshal(r)
	return Event{Kind: EventTested, Report: &messages.Report{Status: messages.ReportOK, Result: raw, Summary: "ran"}, Test: &r}
}

func startWith(f ChangeFacts, testFailing bool) Event {
	return Event{Kind: EventStart, Facts: f, TestFailing: testFailing}
}

// step renders a step in one line for the table: kind, round, and what it
// carries.
func step(s Step) string {
	switch s.Kind {
	case StepFinish:
		return "finish"
	case StepReview:
		return fmt.Sprintf("review r%d", s.Round)
	case StepTest:
		return fmt.Sprintf("test r%d", s.Round)
	case StepQA:
		return fmt.Sprintf("qa r%d", s.Round)
	case StepDiagnose:
		return fmt.Sprintf("diagnose r%d", s.Round)
	case StepFix:
		return fmt.Sprintf("fix %s r%d: %s", s.Failed, s.Round, strings.TrimSpace(s.Problems))
	case StepPass:
		return "pass"
	case StepFail:
		if s.Stage != "" {
			return fmt.Sprintf("fail [%s: %s]: %s", s.Stage, s.Summary, s.Why)
		}
		return "fail: " + s.Why
	}
	return fmt.Sprintf("step %d", s.Kind)
}

var allRoles = Roles{Reviewer: true, Tester: true, Diagnostician: true, Fixer: true}

// TestPipeline drives the pipeline through every path: each row feeds its
// events in order and expects one step per event.
func TestPipeline(t *testing.T) {
	q := config.Default().Quality
	cases := []struct {
		name        string
		roles       Roles
		noRunner    bool
		maxRounds   int
		events      []Event
		steps       []string
		fixRounds   int
		testFailing bool
	}{
		{name: "no gate needed: the turn ends with the model's answer",
			events: []Event{startWith(ungated, false)},
			steps:  []string{"finish"}},
		{name: "review passes, QA passes",
			events: []Event{start, approved, checksGreen},
			steps:  []string{"review r0", "qa r0", "pass"}},
		{name: "minor issues do not block",
			events: []Event{start, approvedMinor, checksGreen},
			steps:  []string{"review r0", "qa r0", "pass"}},
		{name: "review fails, fix round, re-review, QA passes",
			events:    []Event{start, rejected, fixed, approved, checksGreen},
			steps:     []string{"review r0", "fix review r1: - [critical] a.go:3: nil deref", "review r1", "qa r1", "pass"},
			fixRounds: 1},
		{name: "an unknown severity blocks like a major one",
			events:    []Event{start, rejectedOddSev, fixed, approved, checksGreen},
			steps:     []string{"review r0", "fix review r1: - [high] a.go: race", "review r1", "qa r1", "pass"},
			fixRounds: 1},
		{name: "a rejection naming no blocking issue still blocks",
			events:    []Event{start, notApproved, fixed},
			steps:     []string{"review r0", "fix review r1: - [major] : the review did not approve the change: wrong approach", "review r1"},
			fixRounds: 1},
		{name: "review never converges: max fix rounds reached",
			maxRounds: 2,
			events:    []Event{start, rejected, fixed, rejected, fixed, rejected},
			steps: []string{"review r0", "fix review r1: - [critical] a.go:3: nil deref", "review r1",
				"fix review r2: - [critical] a.go:3: nil deref", "review r2", "fail: review still failing after 2 fix rounds"},
			fixRounds: 2},
		{name: "no fix rounds allowed",
			maxRounds: -1,
			events:    []Event{start, rejected},
			steps:     []string{"review r0", "fail: review still failing after -1 fix rounds"}},
		{name: "review stopped by its budget fails the gate",
			events: []Event{start, reviewBudget},
			steps:  []string{"review r0", "fail: the mandatory review did not complete (budget_exceeded: token budget exceeded)"}},
		{name: "review that did not complete fails the gate",
			events: []Event{start, reviewFailed},
			steps:  []string{"review r0", "fail: the mandatory review did not complete (failed: crashed)"}},
		{name: "no reviewer: a mandatory review fails",
			roles:  Roles{Tester: true, Diagnostician: true, Fixer: true},
			events: []Event{start},
			steps:  []string{"fail: review is mandatory but no agent has the reviewer role (the review agent is disabled)"}},
		{name: "no fixer: a failed review cannot be fixed",
			roles:  Roles{Reviewer: true, Tester: true, Diagnostician: true},
			events: []Event{start, rejected},
			steps:  []string{"review r0", "fail: review failed and no agent has the fixer role (the code agent is disabled), so it cannot be fixed"}},
		{name: "failing tests this turn: rerun after review",
			events: []Event{startWith(gated, true), approved, testsGreen, checksGreen},
			steps:  []string{"review r0", "test r0", "qa r0", "pass"}},
		{name: "failing tests alone rerun the tests, then pass without QA",
			events: []Event{startWith(ungated, true), testsGreen},
			steps:  []string{"test r0", "pass"}},
		{name: "tests still red: fix round, tests again",
			events:    []Event{startWith(ungated, true), testsRed, fixed, testsGreen},
			steps:     []string{"test r0", "fix tests r1: - TestMax: got 1 want 2", "test r1", "pass"},
			fixRounds: 1},
		{name: "a test run stopped by its budget goes to a fix round with its summary",
			events:      []Event{startWith(ungated, true), testsBudget},
			steps:       []string{"test r0", "fix tests r1: stopped by budget"},
			fixRounds:   1,
			testFailing: true},
		{name: "no tester: the test rerun is skipped",
			roles:       Roles{Reviewer: true, Diagnostician: true, Fixer: true},
			events:      []Event{startWith(gated, true), approved, checksGreen},
			steps:       []string{"review r0", "qa r0", "pass"},
			testFailing: true},
		{name: "QA fails: diagnosis, fix round, QA again",
			events:    []Event{start, approved, checksRed, diagnosed, fixed, checksGreen},
			steps:     []string{"review r0", "qa r0", "diagnose r0", "fix QA r1: go test failed (exit 1): max.go:3 off by one", "qa r1", "pass"},
			fixRounds: 1},
		{name: "QA fails without a diagnostician: straight to a fix round",
			roles:     Roles{Reviewer: true, Tester: true, Fixer: true},
			events:    []Event{start, approved, checksRed, fixed, checksGreen},
			steps:     []string{"review r0", "qa r0", "fix QA r1: go test failed (exit 1)", "qa r1", "pass"},
			fixRounds: 1},
		{name: "QA never converges",
			maxRounds: 1,
			events:    []Event{start, approved, checksRed, diagnosed, fixed, checksRed, diagnosed},
			steps: []string{"review r0", "qa r0", "diagnose r0", "fix QA r1: go test failed (exit 1): max.go:3 off by one", "qa r1",
				"diagnose r1", "fail: QA still failing after 1 fix round"},
			fixRounds: 1},
		{name: "acceptance criteria force review and QA; unmet criteria fail QA",
			events:    []Event{startWith(criterion, false), approved, checksRed, diagnosed, fixed, checksGreen},
			steps:     []string{"review r0", "qa r0", "diagnose r0", "fix QA r1: go test failed (exit 1): max.go:3 off by one", "qa r1", "pass"},
			fixRounds: 1},
		{name: "no check runner: mandatory QA fails",
			noRunner: true,
			events:   []Event{start, approved},
			steps:    []string{"review r0", "fail [qa: no QA check runner configured]: QA is mandatory but no check runner is available"}},
		{name: "an event out of turn fails the gate",
			events: []Event{start, checksGreen},
			steps:  []string{"review r0", "fail: internal error: gate event 4 while waiting for 2"}},
		{name: "an event after the end fails the gate",
			events: []Event{start, approved, checksGreen, fixed},
			steps:  []string{"review r0", "qa r0", "pass", "fail: internal error: gate event after the gate ended"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Pipeline{MaxFixRounds: 2, Roles: allRoles, CheckRunner: !c.noRunner}
			if c.maxRounds != 0 {
				p.MaxFixRounds = c.maxRounds
			}
			if c.roles != (Roles{}) {
				p.Roles = c.roles
			}
			var got []string
			for _, ev := range c.events {
				if ev.Kind == EventStart {
					ev.Facts.Quality = q
				}
				var s Step
				p, s = p.Next(ev)
				got = append(got, step(s))
			}
			if diff := cmp.Diff(c.steps, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if p.FixRounds != c.fixRounds {
				t.Errorf("fix rounds %d, want %d", p.FixRounds, c.fixRounds)
			}
			if p.TestFailing != c.testFailing {
				t.Errorf("test failing %v, want %v", p.TestFailing, c.testFailing)
			}
		})
	}
}

// A fix round is always followed by the stage that failed, whatever the
// stage and however many rounds came before: a fixed change is never
// passed unseen.
func TestFixRoundReturnsToTheFailedStage(t *testing.T) {
	q := config.Default().Quality
	for _, c := range []struct {
		name   string
		events []Event // up to the first fix round
		again  []Event // the stage failing again, up to the next fix round
		want   StepKind
	}{
		{"review", []Event{{Kind: EventStart, Facts: ChangeFacts{Files: gated.Files, Quality: q}}, rejected}, []Event{rejected}, StepReview},
		{"tests", []Event{{Kind: EventStart, Facts: ChangeFacts{Files: ungated.Files, Quality: q}, TestFailing: true}, testsRed}, []Event{testsRed}, StepTest},
		{"QA", []Event{{Kind: EventStart, Facts: ChangeFacts{Files: gated.Files, Quality: q}}, approved, checksRed, diagnosed}, []Event{checksRed, diagnosed}, StepQA},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Pipeline{MaxFixRounds: 3, Roles: allRoles, CheckRunner: true}
			var s Step
			for _, ev := range c.events {
				p, s = p.Next(ev)
			}
			for round := 1; round <= 3; round++ {
				if s.Kind != StepFix || s.Round != round {
					t.Fatalf("round %d: got %s, want a fix round", round, step(s))
				}
				if p, s = p.Next(fixed); s.Kind != c.want {
					t.Fatalf("after fix round %d: got %s, want the %s stage again", round, step(s), c.name)
				}
				for _, ev := range c.again {
					p, s = p.Next(ev)
				}
			}
		})
	}
}

// Next works on a copy: the pipeline a step came from is unchanged, so
// the executor's state moves only by what Next returns.
func TestNextIsAValue(t *testing.T) {
	p := Pipeline{MaxFixRounds: 2, Roles: allRoles, CheckRunner: true}
	q := config.Default().Quality
	p1, _ := p.Next(Event{Kind: EventStart, Facts: ChangeFacts{Files: gated.Files, Quality: q}})
	p2, s := p1.Next(rejected)
	if s.Kind != StepFix || p1.FixRounds != 0 || p2.FixRounds != 1 {
		t.Fatalf("Next changed its receiver: p1 %d rounds, p2 %d, step %s", p1.FixRounds, p2.FixRounds, step(s))
	}
	if _, s := p1.Next(approved); s.Kind != StepQA {
		t.Fatalf("the earlier pipeline went on differently: %s", step(s))
	}
}

// MaxRounds is the bound users are shown ("review round 2 of 3"): a stage
// that keeps failing runs exactly MaxRounds times before the gate gives
// up, with MaxRounds(fix) fix rounds between, and a run where every stage
// fails once before passing never numbers a stage's run beyond it.
func TestMaxRoundsBoundsEveryStage(t *testing.T) {
	failing := map[string]Event{StageReview: rejected, StageTest: testsRed, StageQA: checksRed}
	passing := map[string]Event{StageReview: approved, StageTest: testsGreen, StageQA: checksGreen}
	stageOf := map[StepKind]string{StepReview: StageReview, StepTest: StageTest, StepQA: StageQA, StepFix: StageFix}
	// drive answers each step (failing stage fails while fails says so)
	// and counts each stage's runs until the gate ends.
	drive := func(p Pipeline, start Event, fails func(stage string, run int) bool) (map[string]int, Step) {
		runs := map[string]int{}
		p, s := p.Next(start)
		for i := 0; i < 100 && !s.terminal(); i++ {
			var ev Event
			switch s.Kind {
			case StepDiagnose:
				ev = diagnosed
			case StepFix:
				runs[StageFix]++
				ev = fixed
			default:
				st := stageOf[s.Kind]
				runs[st]++
				ev = passing[st]
				if fails(st, runs[st]) {
					ev = failing[st]
				}
			}
			p, s = p.Next(ev)
		}
		return runs, s
	}
	for max := 0; max <= 3; max++ {
		p := Pipeline{MaxFixRounds: max, Roles: allRoles, CheckRunner: true}
		for _, stage := range []string{StageReview, StageTest, StageQA} {
			t.Run(fmt.Sprintf("%s keeps failing, max_fix_rounds %d", stage, max), func(t *testing.T) {
				runs, end := drive(p, startWith(gated, true), func(st string, _ int) bool { return st == stage })
				if end.Kind != StepFail {
					t.Fatalf("ended with %s, want a failed gate", step(end))
				}
				if runs[stage] != p.MaxRounds(stage) || runs[StageFix] != p.MaxRounds(StageFix) {
					t.Errorf("runs %v, want %s %d times and %d fixes", runs, stage, p.MaxRounds(stage), p.MaxRounds(StageFix))
				}
			})
		}
		t.Run(fmt.Sprintf("each stage fails once, max_fix_rounds %d", max), func(t *testing.T) {
			runs, _ := drive(p, startWith(gated, true), func(_ string, run int) bool { return run == 1 })
			for st, n := range runs {
				if n > p.MaxRounds(st) {
					t.Errorf("%s ran %d times, beyond its %d rounds (runs %v)", st, n, p.MaxRounds(st), runs)
				}
			}
		})
	}
}

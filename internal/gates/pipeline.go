package gates

import (
	"fmt"
	"strings"

	"github.com/odin-code/odin/messages"
)

// Stage names, as they appear in messages.GateStageResult.
const (
	StageReview = "review"
	StageTest   = "test"
	StageQA     = "qa"
	StageFix    = "fix"
)

// Roles says which gate roles the roster fills: a missing role decides
// what the pipeline does when it would need it (a missing reviewer fails
// a mandatory review; a missing tester skips the test rerun; a missing
// diagnostician sends failing checks straight to a fix round; a missing
// fixer fails the gate instead of fixing).
type Roles struct {
	Reviewer, Tester, Diagnostician, Fixer bool
}

// Pipeline is the state of one turn's quality gates: review → test → QA,
// with fix rounds through the fixer, bounded by MaxFixRounds. It is a
// value: Next returns the pipeline after an event together with the step
// to execute, and does nothing itself. The Orchestrator executes steps
// (spawns the agents, runs the checks) and feeds their outcomes back as
// events; every decision — which stage comes next, whether a fix round is
// allowed, when the gate passes or fails — is Next's.
type Pipeline struct {
	// MaxFixRounds is quality.max_fix_rounds.
	MaxFixRounds int
	// Roles are the gate roles the roster fills.
	Roles Roles
	// CheckRunner says whether QA checks can run at all.
	CheckRunner bool

	// Decision is the gate decision taken on the EventStart event.
	Decision messages.GateDecision
	// FixRounds counts the fix rounds started so far.
	FixRounds int
	// TestFailing is set while a failing test run of this turn has not
	// been rerun green: the test stage then runs (again).
	TestFailing bool

	// awaiting is the event the last step waits for; resume is the stage
	// a fix round returns to.
	awaiting EventKind
	resume   string
	ended    bool
}

// EventKind names what just happened in a gate run.
type EventKind int

// The events Next understands. Each but EventStart answers one step.
const (
	eventNone EventKind = iota
	// EventStart begins the run: Facts and TestFailing are set.
	EventStart
	// EventReviewed answers StepReview: Report and Review are set.
	EventReviewed
	// EventTested answers StepTest: Report and Test are set.
	EventTested
	// EventChecked answers StepQA: Passed and Problems are set.
	EventChecked
	// EventDiagnosed answers StepDiagnose: Problems is set.
	EventDiagnosed
	// EventFixed answers StepFix.
	EventFixed
)

// Event is an outcome fed back into the pipeline.
type Event struct {
	Kind EventKind
	// Facts are the change's facts (EventStart).
	Facts ChangeFacts
	// TestFailing is whether a test run of this turn failed (EventStart).
	TestFailing bool
	// Report is the gate agent's report (EventReviewed, EventTested);
	// nil or a status other than ok means the run did not complete — it
	// failed, was cancelled, or was stopped by its budget.
	Report *messages.Report
	// Review is the decoded review (EventReviewed); nil when the report
	// carried none that decodes.
	Review *messages.ReviewResult
	// Test is the decoded test result (EventTested); nil when none decodes.
	Test *messages.TestResult
	// Passed is QA's verdict from exit codes and acceptance criteria
	// (EventChecked).
	Passed bool
	// Problems are what the fixer is told to fix (EventChecked,
	// EventDiagnosed, and EventTested when Test lists no failures).
	Problems string
}

// StepKind names what the executor must do next.
type StepKind int

// The steps Next returns.
const (
	// StepFinish ends the turn with the model's own answer: no gate was
	// required.
	StepFinish StepKind = iota + 1
	// StepReview spawns the reviewer.
	StepReview
	// StepTest spawns the tester to rerun the tests.
	StepTest
	// StepQA runs the project's checks and the acceptance criteria.
	StepQA
	// StepDiagnose spawns the diagnostician on failing checks.
	StepDiagnose
	// StepFix spawns the fixer with Problems from Failed.
	StepFix
	// StepPass ends the gate as passed.
	StepPass
	// StepFail ends the gate as failed for Why.
	StepFail
)

// Step is one instruction to the executor.
type Step struct {
	Kind StepKind
	// Round is the fix round the stage runs in (0 before any fix).
	Round int
	// Failed is the stage whose failure a StepFix fixes, in the words of
	// the fixer's brief: "review", "tests" or "QA".
	Failed string
	// Problems are what StepFix must fix.
	Problems string
	// Why is the reason of a StepFail.
	Why string
	// Stage, when set on a StepFail, is a stage that could not even run
	// (QA without a check runner): the executor records it as started
	// and failed with Summary before failing the gate.
	Stage, Summary string
}

func (s Step) terminal() bool {
	return s.Kind == StepFinish || s.Kind == StepPass || s.Kind == StepFail
}

// Next returns the pipeline after ev and the step to execute. An event
// that does not answer the last step (or arrives after the end) fails the
// gate: a pipeline that lost track must not pass a change.
func (p Pipeline) Next(ev Event) (Pipeline, Step) {
	var s Step
	switch {
	case p.ended:
		s = Step{Kind: StepFail, Why: "internal error: gate event after the gate ended"}
	case ev.Kind == EventStart && p.awaiting == eventNone:
		s = p.start(ev)
	case ev.Kind != p.awaiting:
		s = Step{Kind: StepFail, Why: fmt.Sprintf("internal error: gate event %d while waiting for %d", ev.Kind, p.awaiting)}
	default:
		s = p.answer(ev)
	}
	p.awaiting = awaits(s.Kind)
	p.ended = s.terminal()
	return p, s
}

// start takes the gate decision: nothing to gate ends the turn, a
// required review comes first, a failing test alone reruns the tests.
func (p *Pipeline) start(ev Event) Step {
	p.Decision = Decide(ev.Facts)
	p.TestFailing = ev.TestFailing
	switch {
	case !p.Decision.ReviewRequired && !p.TestFailing:
		return Step{Kind: StepFinish}
	case p.Decision.ReviewRequired:
		return p.enter(StageReview)
	default:
		return p.enter(StageTest)
	}
}

func (p *Pipeline) answer(ev Event) Step {
	switch ev.Kind {
	case EventReviewed:
		r := ev.Report
		if r == nil || r.Status != messages.ReportOK || ev.Review == nil {
			status, summary := messages.ReportFailed, "no report"
			if r != nil {
				status, summary = r.Status, r.Summary
			}
			return Step{Kind: StepFail, Why: fmt.Sprintf("the mandatory review did not complete (%s: %s)", status, summary)}
		}
		if blocking := BlockingIssues(*ev.Review); len(blocking) > 0 {
			return p.fix("review", IssuesText(blocking), StageReview)
		}
		return p.enter(StageTest)
	case EventTested:
		ok := ev.Report != nil && ev.Report.Status == messages.ReportOK && ev.Test != nil
		if !ok || ev.Test.Failed > 0 {
			return p.fix("tests", testProblems(ev), StageTest)
		}
		p.TestFailing = false
		return p.enter(StageQA)
	case EventChecked:
		if ev.Passed {
			return Step{Kind: StepPass}
		}
		if !p.Roles.Diagnostician {
			return p.fix("QA", ev.Problems, StageQA)
		}
		return Step{Kind: StepDiagnose, Round: p.FixRounds}
	case EventDiagnosed:
		return p.fix("QA", ev.Problems, StageQA)
	case EventFixed:
		// A fixed change goes back to the stage that failed: review,
		// tests and QA all see the fix before the gate can pass.
		return p.enter(p.resume)
	}
	return Step{Kind: StepFail, Why: fmt.Sprintf("internal error: unknown gate event %d", ev.Kind)}
}

// enter starts stage, or the first stage after it that must run.
func (p *Pipeline) enter(stage string) Step {
	switch stage {
	case StageReview:
		if !p.Roles.Reviewer {
			return Step{Kind: StepFail, Why: "review is mandatory but no agent has the reviewer role (the review agent is disabled)"}
		}
		return Step{Kind: StepReview, Round: p.FixRounds}
	case StageTest:
		if !p.TestFailing || !p.Roles.Tester {
			return p.enter(StageQA)
		}
		return Step{Kind: StepTest, Round: p.FixRounds}
	case StageQA:
		if !p.Decision.QARequired {
			return Step{Kind: StepPass}
		}
		if !p.CheckRunner {
			return Step{Kind: StepFail, Why: "QA is mandatory but no check runner is available",
				Stage: StageQA, Summary: "no QA check runner configured", Round: p.FixRounds}
		}
		return Step{Kind: StepQA, Round: p.FixRounds}
	}
	return Step{Kind: StepFail, Why: "internal error: unknown gate stage " + stage}
}

// fix starts a fix round for the failed stage, to return to resume after
// it; past MaxFixRounds, or without a fixer, the gate fails instead.
func (p *Pipeline) fix(failed, problems, resume string) Step {
	if p.FixRounds >= p.MaxFixRounds {
		return Step{Kind: StepFail, Why: fmt.Sprintf("%s still failing after %d fix %s", failed, p.MaxFixRounds, rounds(p.MaxFixRounds))}
	}
	if !p.Roles.Fixer {
		return Step{Kind: StepFail, Why: failed + " failed and no agent has the fixer role (the code agent is disabled), so it cannot be fixed"}
	}
	p.FixRounds++
	p.resume = resume
	return Step{Kind: StepFix, Round: p.FixRounds, Failed: failed, Problems: problems}
}

// MaxRounds is the most rounds stage can have in one turn (the largest
// round GateStageResult counts, in either of its numberings): a fix
// round per allowed fix, and for review, test and QA their first run plus
// one after each fix, since a fix returns the change to the stage that
// failed.
func (p Pipeline) MaxRounds(stage string) int {
	if stage == StageFix {
		return p.MaxFixRounds
	}
	return p.MaxFixRounds + 1
}

// awaits is the event that answers a step.
func awaits(k StepKind) EventKind {
	switch k {
	case StepReview:
		return EventReviewed
	case StepTest:
		return EventTested
	case StepQA:
		return EventChecked
	case StepDiagnose:
		return EventDiagnosed
	case StepFix:
		return EventFixed
	}
	return eventNone
}

// IssuesText lists review issues for the fixer's brief.
func IssuesText(issues []messages.ReviewIssue) string {
	var b strings.Builder
	for _, is := range issues {
		loc := is.File
		if is.Line > 0 {
			loc += fmt.Sprintf(":%d", is.Line)
		}
		fmt.Fprintf(&b, "- [%s] %s: %s\n", is.Severity, loc, is.Message)
	}
	return b.String()
}

// testProblems lists a failed test run's failures for the fixer, or the
// run's summary when it names none (a run that did not complete).
func testProblems(ev Event) string {
	if ev.Test == nil || len(ev.Test.Failures) == 0 {
		if ev.Report != nil {
			return ev.Report.Summary
		}
		return ev.Problems
	}
	var b strings.Builder
	for _, f := range ev.Test.Failures {
		fmt.Fprintf(&b, "- %s: %s", f.Test, f.Message)
		if f.Diagnosis != "" {
			fmt.Fprintf(&b, " (diagnosis: %s)", f.Diagnosis)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// rounds is "round" or "rounds" for n: what users read never says
// "round(s)".
func rounds(n int) string {
	if n == 1 {
		return "round"
	}
	return "rounds"
}

package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/gates"
	"github.com/odin-code/odin/internal/untrusted"
	"github.com/odin-code/odin/messages"
)

// CheckRunner finds and runs the QA checks of a project.
type CheckRunner interface {
	// Checks returns the commands QA runs, in order.
	Checks(ctx context.Context) []messages.QACheck
	// Run runs one check and fills in its outcome.
	Run(ctx context.Context, check messages.QACheck) messages.QACheck
}

// gateRun executes one turn's quality-gate pipeline (gates.Pipeline): the
// pipeline decides each step, gateRun carries it out — spawns the gate
// agents, runs the checks, publishes the stages — and feeds the outcome
// back. It decides nothing itself.
type gateRun struct {
	o      *Orchestrator
	t      *turnState
	p      gates.Pipeline
	report messages.GateReport
	// runs counts each stage's runs (GateStageResult.Run).
	runs map[string]int
	// diagnosing is QA's result while the diagnostician works on it; it
	// joins the report with the diagnosis.
	diagnosing *messages.QAResult
	// shown is each changed file's content as the last brief's diff left
	// it (nil until a brief showed one): a later round's brief shows only
	// the diff since, and names the earlier rounds instead of repeating
	// what they were sent.
	shown map[string][]byte
	// first is the changed files' content as the first brief showed it,
	// the state the interim answer describes: synthesis is sent only what
	// the fix rounds changed since.
	first map[string][]byte
}

func newGateRun(o *Orchestrator, t *turnState) *gateRun {
	_, reviewer := o.deps.Roster.ByRole(RoleReviewer)
	_, tester := o.deps.Roster.ByRole(RoleTester)
	_, diagnostician := o.deps.Roster.ByRole(RoleDiagnostician)
	_, fixer := o.deps.Roster.ByRole(RoleFixer)
	return &gateRun{o: o, t: t, p: gates.Pipeline{
		MaxFixRounds: o.deps.Config.Quality.MaxFixRounds,
		Roles:        gates.Roles{Reviewer: reviewer, Tester: tester, Diagnostician: diagnostician, Fixer: fixer},
		CheckRunner:  o.deps.Checks != nil,
	}}
}

// facts gathers what the decision needs; it reads the changed files, so
// it runs off the mailbox and must not touch the actor.
func facts(root string, q config.Quality, files []string, requested string, tracker ChangeTracker) gates.ChangeFacts {
	f := gates.ChangeFacts{Files: relPaths(root, files), Quality: q, Requested: requested, APIChanges: map[string][]string{}}
	if tracker != nil {
		for _, abs := range files {
			before, existed, ok := tracker.Snapshot(abs)
			if !ok {
				continue
			}
			after, _ := readFileLimited(abs)
			if ch := gates.GoAPIChanges(abs, before, after, existed); len(ch) > 0 {
				f.APIChanges[relPath(root, abs)] = ch
			}
		}
		f.Refactors = refactors(root, q, files, tracker)
	}
	return f
}

// start reads the facts of the change off the mailbox, then lets the
// pipeline decide.
func (g *gateRun) start(c actor.Context) {
	root, q, files, requested, tracker := g.o.deps.Root, g.o.deps.Config.Quality, append([]string(nil), g.t.files...), g.t.review, g.t.tracker
	criteria := len(criteriaOf(g.o.todos))
	offMailbox(c, g.t.ctx, g.t.id, nil, func(context.Context) gates.ChangeFacts {
		f := facts(root, q, files, requested, tracker)
		f.Acceptance = criteria
		return f
	}, func(c actor.Context, f gates.ChangeFacts) {
		g.next(c, gates.Event{Kind: gates.EventStart, Facts: f, TestFailing: g.t.testFailed})
	})
}

// next feeds ev to the pipeline and executes the step it returns.
func (g *gateRun) next(c actor.Context, ev gates.Event) {
	var s gates.Step
	g.p, s = g.p.Next(ev)
	g.report.FixRounds = g.p.FixRounds
	if ev.Kind == gates.EventStart {
		g.report.Decision = g.p.Decision
		g.o.deps.Bus.Publish(messages.GateDecided{Decision: g.p.Decision})
	}
	g.exec(c, s)
}

func (g *gateRun) exec(c actor.Context, s gates.Step) {
	switch s.Kind {
	case gates.StepFinish:
		g.report.Passed = true
		g.o.finishTurn(c, messages.TurnDone, "")
	case gates.StepReview:
		g.review(c, s.Round)
	case gates.StepTest:
		g.test(c, s.Round)
	case gates.StepQA:
		g.qa(c, s.Round)
	case gates.StepDiagnose:
		g.diagnose(c, s.Round)
	case gates.StepFix:
		g.fix(c, s)
	case gates.StepPass:
		g.pass(c)
	case gates.StepFail:
		if s.Stage != "" {
			g.stage(messages.GateStageResult{Stage: s.Stage, Round: s.Round}, false)
			g.stage(messages.GateStageResult{Stage: s.Stage, Round: s.Round, Summary: s.Summary}, true)
		}
		g.fail(c, s.Why)
	}
}

func (g *gateRun) stage(res messages.GateStageResult, done bool) {
	if g.runs == nil {
		g.runs = map[string]int{}
	}
	if !done {
		g.runs[res.Stage]++
	}
	res.Run = g.runs[res.Stage]
	res.MaxRounds = g.p.MaxRounds(res.Stage)
	if done {
		g.report.Stages = append(g.report.Stages, res)
	}
	g.o.deps.Bus.Publish(messages.GateStage{GateStageResult: res, Done: done})
}

// withBrief renders the brief every gate specialist starts from (the
// request, the changed files, the diff) off the mailbox, since the diff
// reads the files, and hands it to then inside Receive. The first brief
// of a gate run has the whole diff; a later one only the diff since the
// brief before it, with the earlier rounds' outcomes: every round of the
// run used to carry the whole diff again, and each gate specialist's
// requests repeat their brief (issue 37).
//
// skip names a stage whose rounds the brief leaves out of the earlier
// ones: QA's diagnosis of failing checks has no use for review verdicts.
func (g *gateRun) withBrief(c actor.Context, skip string, then func(c actor.Context, brief string)) {
	root, body, files, tracker := g.o.deps.Root, g.t.input.Body, append([]string(nil), g.t.files...), g.t.tracker
	shown, earlier := g.shown, stagesText(g.report.Stages, skip)
	type brief struct {
		text  string
		shown map[string][]byte
	}
	offMailbox(c, g.t.ctx, g.t.id, nil, func(context.Context) brief {
		var b strings.Builder
		// The root once, the files under it: every brief of the run, new
		// to the cache each time, repeated the root for each file.
		fmt.Fprintf(&b, "The user asked:\n%s\n\n", body)
		var diff string
		var now map[string][]byte
		if tracker != nil {
			diff, now = tracker.DiffSince(files, shown)
		}
		// The whole diff names every file: the list would say it twice.
		if tracker != nil && shown == nil && diff != "" {
			fmt.Fprintf(&b, "The diff, paths under %s:\n```diff\n%s```\n", root, shorten(diff, 40000))
			return brief{text: b.String(), shown: now}
		}
		fmt.Fprintf(&b, "Changed files, under %s:\n", root)
		for _, f := range relPaths(root, files) {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		switch {
		case tracker == nil:
			return brief{text: b.String(), shown: shown}
		case shown == nil:
		default:
			if earlier == "" {
				// A specialist told of no earlier round has no use for
				// "nothing changed since" it.
				b.WriteString("\nRead the files above for the whole change.\n")
				if diff != "" {
					fmt.Fprintf(&b, "\nThe diff since the last round:\n```diff\n%s```\n", shorten(diff, 40000))
				}
				break
			}
			fmt.Fprintf(&b, "\nEarlier gate rounds (read the files above for the whole change):\n%s", earlier)
			if diff == "" {
				b.WriteString("\nNothing changed since the last round.\n")
			} else {
				fmt.Fprintf(&b, "\nThe diff since the last round:\n```diff\n%s```\n", shorten(diff, 40000))
			}
		}
		return brief{text: b.String(), shown: now}
	}, func(c actor.Context, r brief) {
		if g.first == nil {
			g.first = r.shown
		}
		g.shown = r.shown
		then(c, r.text)
	})
}

// stagesText lists finished gate stages, one line each, for a later
// round's brief.
func stagesText(stages []messages.GateStageResult, skip string) string {
	var b strings.Builder
	for _, s := range stages {
		if s.Stage == skip {
			continue
		}
		fmt.Fprintf(&b, "- %s (round %d): %s — %s\n", s.Stage, s.ShownRound(), s.Mark(), s.Summary)
	}
	return b.String()
}

// agent returns the definition playing role; the pipeline only asks for
// roles the roster filled when the run started.
func (g *gateRun) agent(c actor.Context, role Role) (*AgentDefinition, bool) {
	def, ok := g.o.deps.Roster.ByRole(role)
	if !ok {
		g.fail(c, fmt.Sprintf("internal error: no agent has the %s role any more", role))
	}
	return def, ok
}

func (g *gateRun) review(c actor.Context, round int) {
	def, ok := g.agent(c, RoleReviewer)
	if !ok {
		return
	}
	g.stage(messages.GateStageResult{Stage: gates.StageReview, Round: round}, false)
	g.withBrief(c, "", func(c actor.Context, brief string) {
		// The Review role says what blocks and when to approve.
		brief += acceptanceBrief(g.o.todos) + "\nReview this change."
		g.o.spawnTask(c, def, "review the change", brief, def.Timeout, "", func(c actor.Context, r *messages.Report) {
			var rr messages.ReviewResult
			if r.Status != messages.ReportOK || r.Result == nil || json.Unmarshal(r.Result, &rr) != nil {
				g.stage(messages.GateStageResult{Stage: gates.StageReview, Round: round, Summary: "review did not complete: " + r.Summary, TaskID: r.TaskID}, true)
				g.next(c, gates.Event{Kind: gates.EventReviewed, Report: r})
				return
			}
			g.report.Review = &rr
			blocking := gates.BlockingIssues(rr)
			g.stage(messages.GateStageResult{Stage: gates.StageReview, Round: round, Passed: len(blocking) == 0, TaskID: r.TaskID,
				Summary: fmt.Sprintf("%s, %d blocking: %s", plural(len(rr.Issues), "issue"), len(blocking), rr.Summary)}, true)
			g.next(c, gates.Event{Kind: gates.EventReviewed, Report: r, Review: &rr})
		})
	})
}

func (g *gateRun) test(c actor.Context, round int) {
	def, ok := g.agent(c, RoleTester)
	if !ok {
		return
	}
	g.stage(messages.GateStageResult{Stage: gates.StageTest, Round: round}, false)
	g.withBrief(c, "", func(c actor.Context, brief string) {
		brief += "\nRun the project's tests for this change and report the results. Do not change production code."
		g.o.spawnTask(c, def, "rerun the tests", brief, def.Timeout, "", func(c actor.Context, r *messages.Report) {
			ev := gates.Event{Kind: gates.EventTested, Report: r}
			var tr messages.TestResult
			if r.Status == messages.ReportOK && r.Result != nil && json.Unmarshal(r.Result, &tr) == nil {
				g.report.Test = &tr
				ev.Test = &tr
			}
			g.stage(messages.GateStageResult{Stage: gates.StageTest, Round: round, Passed: ev.Test != nil && tr.Failed == 0, TaskID: r.TaskID, Summary: r.Summary}, true)
			g.next(c, ev)
		})
	})
}

func (g *gateRun) qa(c actor.Context, round int) {
	g.stage(messages.GateStageResult{Stage: gates.StageQA, Round: round}, false)
	runner := g.o.deps.Checks
	id := g.t.id
	crit := criterionChecks(criteriaOf(g.o.todos))
	meter, root, files, tracker := g.o.deps.Coverage, g.o.deps.Root, append([]string(nil), g.t.files...), g.t.tracker
	runAsync(c, g.t.ctx, func(ctx context.Context) any {
		checks := runner.Checks(ctx)
		for i := range checks {
			checks[i] = runner.Run(ctx, checks[i])
		}
		for i := range crit {
			crit[i] = runner.Run(ctx, crit[i])
		}
		return &checksDone{turn: id, checks: checks, criteria: crit, coverage: measureCoverage(ctx, meter, root, files, tracker)}
	})
}

// onChecks judges the checks: exit codes and the acceptance criteria
// decide QA's verdict; the pipeline decides what follows.
func (g *gateRun) onChecks(c actor.Context, msg *checksDone) {
	round := g.p.FixRounds
	qa := &messages.QAResult{Checks: msg.checks, Passed: true, Blockers: []string{}, Warnings: []string{}}
	for _, ch := range msg.checks {
		if ch.Required && !ch.Passed {
			qa.Passed = false
			qa.Blockers = append(qa.Blockers, fmt.Sprintf("%s failed (exit %d): %s", ch.Name, ch.ExitCode, ch.Command))
		}
	}
	if len(msg.checks) == 0 {
		qa.Warnings = append(qa.Warnings, "no build, lint or test command is configured (quality.build/lint/test) or detectable")
	}
	applyAcceptance(qa, judgeCriteria(criteriaOf(g.o.todos), msg.criteria, g.report.Review), msg.coverage)
	switch {
	case !qa.Passed && g.p.Roles.Diagnostician:
		g.diagnosing = qa
	case qa.Passed:
		qa.Summary = plural(len(msg.checks), "check") + " passed"
		g.stage(messages.GateStageResult{Stage: gates.StageQA, Round: round, Passed: true, Summary: qa.Summary}, true)
	case !g.p.Roles.Diagnostician:
		qa.Summary = strings.Join(qa.Blockers, "; ")
		g.stage(messages.GateStageResult{Stage: gates.StageQA, Round: round, Summary: qa.Summary}, true)
	}
	if g.diagnosing == nil {
		g.report.QA = qa
	}
	// The QA stage of a diagnosed failure ends with the diagnosis.
	g.next(c, gates.Event{Kind: gates.EventChecked, Passed: qa.Passed, Problems: qaProblems(qa)})
}

// diagnose has the QA specialist diagnose failing checks; the verdict
// itself stays the exit codes'.
func (g *gateRun) diagnose(c actor.Context, round int) {
	def, ok := g.agent(c, RoleDiagnostician)
	if !ok {
		return
	}
	qa := g.diagnosing
	g.withBrief(c, gates.StageReview, func(c actor.Context, brief string) {
		brief += "\nOdin ran the project's checks (exit codes are final):\n" + checksText(qa.Checks)
		if unmet := unmetCriteriaText(qa.Criteria); unmet != "" {
			// Blockers as much as a failing check: QA names what is
			// missing, and its report cannot clear them.
			brief += "\nThe plan's acceptance criteria that are NOT met (Odin's verdict, final; each one blocks this change):\n" + unmet
		}
		// The QA role says how to name a blocker (file, line, cause, fix).
		brief += "\nDiagnose each failure."
		g.o.spawnTask(c, def, "diagnose failing checks", brief, def.Timeout, "", func(c actor.Context, r *messages.Report) {
			var mr messages.QAResult
			if r.Status == messages.ReportOK && r.Result != nil && json.Unmarshal(r.Result, &mr) == nil {
				qa.Blockers = mergeBlockers(qa.Blockers, mr.Blockers)
				qa.Warnings = append(qa.Warnings, mr.Warnings...)
				qa.Summary = mr.Summary
			}
			if qa.Summary == "" {
				qa.Summary = strings.Join(qa.Blockers, "; ")
			}
			g.report.QA, g.diagnosing = qa, nil
			g.stage(messages.GateStageResult{Stage: gates.StageQA, Round: round, Passed: false, TaskID: r.TaskID, Summary: qa.Summary}, true)
			g.next(c, gates.Event{Kind: gates.EventDiagnosed, Problems: qaProblems(qa)})
		})
	})
}

func qaProblems(qa *messages.QAResult) string {
	return strings.Join(qa.Blockers, "\n") + "\n\n" + checksText(qa.Checks)
}

// fix sends the change back to Code with the problems of the failed stage;
// the pipeline then reruns that stage.
func (g *gateRun) fix(c actor.Context, s gates.Step) {
	def, ok := g.agent(c, RoleFixer)
	if !ok {
		return
	}
	g.stage(messages.GateStageResult{Stage: gates.StageFix, Round: s.Round}, false)
	g.withBrief(c, "", func(c actor.Context, brief string) {
		brief += fmt.Sprintf("\nThe %s gate rejected this change. Fix these problems (fix round %d of %d):\n\n%s\n",
			s.Failed, s.Round, g.p.MaxFixRounds, s.Problems)
		if unmet := g.unmetCriteria(); unmet != "" {
			brief += "\nThe change is not done until each of the plan's acceptance criteria holds; these do not yet (fix them too):\n" + unmet
		}
		stage := s.Failed
		g.o.spawnTask(c, def, "fix "+stage+" findings", brief, def.Timeout, "", func(c actor.Context, r *messages.Report) {
			g.stage(messages.GateStageResult{Stage: gates.StageFix, Round: s.Round, Passed: r.Status == messages.ReportOK, TaskID: r.TaskID, Summary: r.Summary}, true)
			if g.t.tracker != nil {
				g.t.files = addUnique(g.t.files, g.t.tracker.Changed()...)
			}
			g.next(c, gates.Event{Kind: gates.EventFixed})
		})
	})
}

// unmetCriteria lists the acceptance criteria last judged unmet: by QA
// when it ran this gate run, else by the review's verdicts on the plan's
// criteria.
func (g *gateRun) unmetCriteria() string {
	if g.report.QA != nil && len(g.report.QA.Criteria) > 0 {
		return unmetCriteriaText(g.report.QA.Criteria)
	}
	if g.report.Review == nil {
		return ""
	}
	var judged []messages.CriterionResult
	for _, c := range criteriaOf(g.o.todos) {
		if v, ok := reviewVerdict(g.report.Review, c.Criterion); ok {
			judged = append(judged, messages.CriterionResult{Todo: c.todo, Criterion: c.Criterion, Command: c.Command, By: "review", Met: v.Met, Evidence: v.Evidence})
		}
	}
	return unmetCriteriaText(judged)
}

// pass and fail end a gate run that ran: the turn's answer is then
// written anew from the final state (synthesize).
func (g *gateRun) pass(c actor.Context) {
	g.report.Passed = true
	g.o.synthesize(c, messages.TurnDone, "")
}

func (g *gateRun) fail(c actor.Context, why string) {
	g.report.Passed = false
	g.o.synthesize(c, messages.TurnGateFailed, "quality gate failed: "+why)
}

// checksText lists the QA checks for a specialist's brief. A failing
// check's output is whatever the project's build and tests printed (code
// the model wrote, or a clone's test that prints "ignore your
// instructions"), so it is fenced as untrusted data like every other
// content from outside. Its readers are specialists, whose system message
// states the fencing rule, so a line names the fence.
func checksText(checks []messages.QACheck) string {
	var b strings.Builder
	fence := untrusted.NewFence(untrusted.Data, "printed by the project's checks")
	fenced := false
	for _, ch := range checks {
		status := "passed"
		if !ch.Passed {
			status = fmt.Sprintf("FAILED (exit %d)", ch.ExitCode)
		}
		fmt.Fprintf(&b, "### %s: `%s` — %s\n", ch.Name, ch.Command, status)
		if !ch.Passed && ch.Output != "" {
			fmt.Fprintf(&b, "%s\n", fence.Wrap(strings.TrimRight(ch.Output, "\n")))
			fenced = true
		}
	}
	if fenced {
		b.WriteString(fence.Note() + "\n")
	}
	return b.String()
}

// readFileLimited reads a changed file for API comparison; files over 4 MiB
// are not analysed.
func readFileLimited(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > 4<<20 {
		return nil, fmt.Errorf("too large")
	}
	return os.ReadFile(path)
}

// plural is "1 issue", "2 issues": counts in what users read are never
// written "issue(s)".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

package actors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/odin-code/odin/internal/untrusted"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

// ChangeFacts are the facts a gate decision is made from.
type ChangeFacts struct {
	// Files are the changed files, relative to the project root.
	Files []string
	// Quality holds quality.risk_paths and quality.public_api.
	Quality config.Quality
	// APIChanges are Go files whose exported API changed, with what changed.
	APIChanges map[string][]string
	// Requested is the Orchestrator model's reason for asking review, if any.
	Requested string
	// Refactors are the significant refactors found (internal/refactor):
	// renames and moves of exported identifiers or files, a large change.
	Refactors []string
	// Acceptance is the number of acceptance criteria the plan's todo
	// items carry: QA must check them.
	Acceptance int
}

// Decide is the quality-gate rule (seed 004, enforced in code): two or more
// changed files, a risk path, a public API change or an explicit request
// make review and QA mandatory. Every reason is recorded.
func Decide(f ChangeFacts) messages.GateDecision {
	d := messages.GateDecision{Files: slices.Clone(f.Files), Reasons: []string{}}
	if n := len(f.Files); n >= 2 {
		d.Reasons = append(d.Reasons, fmt.Sprintf("multi-file change: %d files changed", n))
	}
	for _, file := range f.Files {
		if g, ok := f.Quality.MatchRiskPath(filepath.ToSlash(file)); ok {
			d.Reasons = append(d.Reasons, fmt.Sprintf("risk path: %s matches %s", file, g))
		}
	}
	files := make([]string, 0, len(f.APIChanges))
	for file := range f.APIChanges {
		files = append(files, file)
	}
	sort.Strings(files)
	for _, file := range files {
		d.Reasons = append(d.Reasons, fmt.Sprintf("public API change in %s: %s", file, strings.Join(f.APIChanges[file], ", ")))
	}
	for _, file := range f.Files {
		if strings.HasSuffix(file, ".go") {
			continue
		}
		if g, ok := f.Quality.MatchPublicAPI(filepath.ToSlash(file)); ok {
			d.Reasons = append(d.Reasons, fmt.Sprintf("public API file: %s matches %s", file, g))
		}
	}
	if f.Acceptance > 0 {
		d.Reasons = append(d.Reasons, fmt.Sprintf("acceptance criteria to verify: %d", f.Acceptance))
	}
	for _, r := range f.Refactors {
		d.Reasons = append(d.Reasons, "significant refactor: "+r)
	}
	if f.Requested != "" {
		d.Reasons = append(d.Reasons, "requested by the Orchestrator: "+f.Requested)
	}
	d.ReviewRequired = len(d.Reasons) > 0
	d.QARequired = d.ReviewRequired
	return d
}

// GoAPIChanges compares the exported API of a Go file before and after a
// change: exported functions, methods on exported types, types, and
// package-level variables and constants, with their signatures. Test files
// and package main have no public API. A file that does not parse is
// compared as changed only if it parsed before.
func GoAPIChanges(path string, before, after []byte, existed bool) []string {
	if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
		return nil
	}
	var old map[string]string
	if existed {
		old = exportedAPI(before)
	}
	cur := exportedAPI(after)
	if cur == nil && old == nil {
		return nil
	}
	var out []string
	for name, sig := range cur {
		prev, ok := old[name]
		switch {
		case !ok:
			out = append(out, "added "+name)
		case prev != sig:
			out = append(out, "changed "+name)
		}
	}
	for name := range old {
		if _, ok := cur[name]; !ok {
			out = append(out, "removed "+name)
		}
	}
	sort.Strings(out)
	return out
}

// exportedAPI maps each exported identifier of a Go source file to its
// declaration text; nil when the file does not parse or is package main.
func exportedAPI(src []byte) map[string]string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil || f.Name.Name == "main" {
		return nil
	}
	api := map[string]string{}
	render := func(n any) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, n)
		return b.String()
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				recv := receiverType(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = recv + "." + name
			}
			api[name] = render(d.Type)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						api[s.Name.Name] = render(exportedShape(s))
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							sig := ""
							if s.Type != nil {
								sig = render(s.Type)
							}
							api[n.Name] = d.Tok.String() + " " + sig
						}
					}
				}
			}
		}
	}
	return api
}

// exportedShape strips unexported struct fields and interface methods so
// that changes to them do not count as API changes.
func exportedShape(s *ast.TypeSpec) *ast.TypeSpec {
	cp := *s
	switch t := s.Type.(type) {
	case *ast.StructType:
		st := *t
		fl := &ast.FieldList{}
		for _, f := range t.Fields.List {
			keep := len(f.Names) == 0 // embedded
			for _, n := range f.Names {
				keep = keep || n.IsExported()
			}
			if keep {
				nf := *f
				nf.Doc, nf.Comment = nil, nil
				fl.List = append(fl.List, &nf)
			}
		}
		st.Fields = fl
		cp.Type = &st
	}
	cp.Doc, cp.Comment = nil, nil
	return &cp
}

func receiverType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverType(t.X)
	case *ast.IndexExpr:
		return receiverType(t.X)
	case *ast.IndexListExpr:
		return receiverType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// BlockingIssues are the review issues that send a change back to Code:
// every critical or major issue, and every issue whose severity is not one
// of messages.Severities (a reviewer that says "high" or "blocker" means it
// and must not pass by a vocabulary mismatch). A review that does not
// approve the change but names no blocking issue is itself blocking: its
// rejection becomes one major issue carrying the review's summary, so that
// "approved: false" can never end in a passed gate.
func BlockingIssues(r messages.ReviewResult) []messages.ReviewIssue {
	var out []messages.ReviewIssue
	for _, is := range r.Issues {
		switch strings.ToLower(strings.TrimSpace(is.Severity)) {
		case messages.SeverityMinor, messages.SeverityInfo:
		default:
			out = append(out, is)
		}
	}
	if len(out) == 0 && !r.Approved {
		why := strings.TrimSpace(r.Summary)
		if why == "" {
			why = "no reason given"
		}
		out = append(out, messages.ReviewIssue{Severity: messages.SeverityMajor, Category: "correctness",
			Message: "the review did not approve the change: " + why})
	}
	return out
}

// CheckRunner finds and runs the QA checks of a project.
type CheckRunner interface {
	// Checks returns the commands QA runs, in order.
	Checks(ctx context.Context) []messages.QACheck
	// Run runs one check and fills in its outcome.
	Run(ctx context.Context, check messages.QACheck) messages.QACheck
}

// gateRun drives the quality-gate pipeline of one turn: review → test →
// QA, with fix rounds through the Code specialist.
type gateRun struct {
	o      *Orchestrator
	t      *turnState
	report messages.GateReport
	// testFailing is set when a Test report of this turn showed failures:
	// the test stage then reruns after fixes.
	testFailing bool
	// runs counts each stage's runs (GateStageResult.Run).
	runs map[string]int
}

func newGateRun(o *Orchestrator, t *turnState) *gateRun {
	return &gateRun{o: o, t: t}
}

// facts gathers what the decision needs; it reads the changed files, so
// it runs off the mailbox and must not touch the actor.
func facts(root string, q config.Quality, files []string, requested string, tracker ChangeTracker) ChangeFacts {
	f := ChangeFacts{Files: relPaths(root, files), Quality: q, Requested: requested, APIChanges: map[string][]string{}}
	if tracker != nil {
		for _, abs := range files {
			before, existed, ok := tracker.Snapshot(abs)
			if !ok {
				continue
			}
			after, _ := readFileLimited(abs)
			if ch := GoAPIChanges(abs, before, after, existed); len(ch) > 0 {
				f.APIChanges[relPath(root, abs)] = ch
			}
		}
		f.Refactors = refactors(root, q, files, tracker)
	}
	return f
}

// start reads the facts of the change off the mailbox, then decides.
func (g *gateRun) start(c actor.Context) {
	root, q, files, requested, tracker := g.o.deps.Root, g.o.deps.Config.Quality, append([]string(nil), g.t.files...), g.t.review, g.t.tracker
	criteria := len(criteriaOf(g.o.todos))
	offMailbox(c, g.t.ctx, g.t.id, nil, func(context.Context) ChangeFacts {
		f := facts(root, q, files, requested, tracker)
		f.Acceptance = criteria
		return f
	}, g.decide)
}

func (g *gateRun) decide(c actor.Context, f ChangeFacts) {
	d := Decide(f)
	g.report.Decision = d
	g.o.deps.Bus.Publish(messages.GateDecided{Decision: d})
	g.testFailing = g.t.testFailed
	if !d.ReviewRequired && !g.testFailing {
		g.report.Passed = true
		g.o.finishTurn(c, messages.TurnDone, "")
		return
	}
	if d.ReviewRequired {
		g.review(c)
		return
	}
	g.test(c)
}

func (g *gateRun) stage(res messages.GateStageResult, done bool) {
	if g.runs == nil {
		g.runs = map[string]int{}
	}
	if !done {
		g.runs[res.Stage]++
	}
	res.Run = g.runs[res.Stage]
	if done {
		g.report.Stages = append(g.report.Stages, res)
	}
	g.o.deps.Bus.Publish(messages.GateStage{GateStageResult: res, Done: done})
}

// withBrief renders the brief every gate specialist starts from (the
// request, the changed files, the diff) off the mailbox, since the diff
// reads the files, and hands it to then inside Receive.
func (g *gateRun) withBrief(c actor.Context, then func(c actor.Context, brief string)) {
	root, body, files, tracker := g.o.deps.Root, g.t.input.Body, append([]string(nil), g.t.files...), g.t.tracker
	offMailbox(c, g.t.ctx, g.t.id, nil, func(context.Context) string {
		var b strings.Builder
		fmt.Fprintf(&b, "The user asked:\n%s\n\nFiles changed in this change set:\n", body)
		for _, f := range relPaths(root, files) {
			fmt.Fprintf(&b, "- %s\n", filepath.Join(root, f))
		}
		if tracker != nil {
			if diff := tracker.Diff(files); diff != "" {
				fmt.Fprintf(&b, "\nThe diff:\n```diff\n%s```\n", shorten(diff, 40000))
			}
		}
		return b.String()
	}, then)
}

func (g *gateRun) review(c actor.Context) {
	def, ok := g.o.deps.Roster.ByRole(RoleReviewer)
	if !ok {
		g.fail(c, "review is mandatory but no agent has the reviewer role (the review agent is disabled)")
		return
	}
	round := g.report.FixRounds
	g.stage(messages.GateStageResult{Stage: "review", Round: round}, false)
	g.withBrief(c, func(c actor.Context, brief string) {
		g.spawnReview(c, def, round, brief+acceptanceBrief(g.o.todos)+"\nReview this change. Report critical and major issues only when they are real; approve otherwise.")
	})
}

func (g *gateRun) spawnReview(c actor.Context, def *AgentDefinition, round int, brief string) {
	g.o.spawnTask(c, def, "review the change", brief, def.Timeout, "", func(c actor.Context, r *messages.Report) {
		var rr messages.ReviewResult
		if r.Status != messages.ReportOK || json.Unmarshal(r.Result, &rr) != nil || r.Result == nil {
			g.stage(messages.GateStageResult{Stage: "review", Round: round, Summary: "review did not complete: " + r.Summary, TaskID: r.TaskID}, true)
			g.fail(c, fmt.Sprintf("the mandatory review did not complete (%s: %s)", r.Status, r.Summary))
			return
		}
		g.report.Review = &rr
		blocking := BlockingIssues(rr)
		passed := len(blocking) == 0
		g.stage(messages.GateStageResult{Stage: "review", Round: round, Passed: passed, TaskID: r.TaskID,
			Summary: fmt.Sprintf("%s, %d blocking: %s", plural(len(rr.Issues), "issue"), len(blocking), rr.Summary)}, true)
		if !passed {
			g.fix(c, "review", issuesText(blocking), g.review)
			return
		}
		g.test(c)
	})
}

func (g *gateRun) test(c actor.Context) {
	if !g.testFailing {
		g.qa(c)
		return
	}
	def, ok := g.o.deps.Roster.ByRole(RoleTester)
	if !ok {
		g.qa(c)
		return
	}
	round := g.report.FixRounds
	g.stage(messages.GateStageResult{Stage: "test", Round: round}, false)
	g.withBrief(c, func(c actor.Context, brief string) {
		g.spawnTest(c, def, round, brief+"\nRun the project's tests for this change and report the results. Do not change production code.")
	})
}

func (g *gateRun) spawnTest(c actor.Context, def *AgentDefinition, round int, brief string) {
	g.o.spawnTask(c, def, "rerun the tests", brief, def.Timeout, "", func(c actor.Context, r *messages.Report) {
		var tr messages.TestResult
		ok := r.Status == messages.ReportOK && r.Result != nil && json.Unmarshal(r.Result, &tr) == nil
		if ok {
			g.report.Test = &tr
		}
		passed := ok && tr.Failed == 0
		g.stage(messages.GateStageResult{Stage: "test", Round: round, Passed: passed, TaskID: r.TaskID, Summary: r.Summary}, true)
		if !passed {
			g.fix(c, "tests", testFailuresText(tr, r), g.test)
			return
		}
		g.testFailing = false
		g.qa(c)
	})
}

func (g *gateRun) qa(c actor.Context) {
	if !g.report.Decision.QARequired {
		g.pass(c)
		return
	}
	round := g.report.FixRounds
	g.stage(messages.GateStageResult{Stage: "qa", Round: round}, false)
	runner := g.o.deps.Checks
	if runner == nil {
		g.stage(messages.GateStageResult{Stage: "qa", Round: round, Passed: false, Summary: "no QA check runner configured"}, true)
		g.fail(c, "QA is mandatory but no check runner is available")
		return
	}
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

func (g *gateRun) onChecks(c actor.Context, msg *checksDone) {
	o := g.o
	round := g.report.FixRounds
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
	applyAcceptance(qa, judgeCriteria(criteriaOf(o.todos), msg.criteria, g.report.Review), msg.coverage)
	if qa.Passed {
		qa.Summary = plural(len(msg.checks), "check") + " passed"
		g.report.QA = qa
		g.stage(messages.GateStageResult{Stage: "qa", Round: round, Passed: true, Summary: qa.Summary}, true)
		g.pass(c)
		return
	}
	// A failing check is diagnosed by the QA specialist; the verdict
	// itself stays the exit codes'.
	def, ok := o.deps.Roster.ByRole(RoleDiagnostician)
	if !ok {
		qa.Summary = strings.Join(qa.Blockers, "; ")
		g.report.QA = qa
		g.stage(messages.GateStageResult{Stage: "qa", Round: round, Summary: qa.Summary}, true)
		g.fix(c, "QA", strings.Join(qa.Blockers, "\n")+"\n\n"+checksText(qa.Checks), g.qa)
		return
	}
	g.withBrief(c, func(c actor.Context, brief string) {
		brief += "\nOdin ran the project's checks on this change; these failed or passed as shown (exit codes are final):\n\n" + checksText(qa.Checks)
		if unmet := unmetCriteriaText(qa.Criteria); unmet != "" {
			// Blockers as much as a failing check: QA names what is
			// missing, and its report cannot clear them.
			brief += "\nThe plan's acceptance criteria that are NOT met (Odin's verdict, final; each one blocks this change):\n" + unmet
		}
		g.spawnDiagnosis(c, def, round, qa, brief+"\nDiagnose each failing check and unmet acceptance criterion: name the blockers precisely (file, line, cause, fix).")
	})
}

func (g *gateRun) spawnDiagnosis(c actor.Context, def *AgentDefinition, round int, qa *messages.QAResult, brief string) {
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
		g.report.QA = qa
		g.stage(messages.GateStageResult{Stage: "qa", Round: round, Passed: false, TaskID: r.TaskID, Summary: qa.Summary}, true)
		g.fix(c, "QA", strings.Join(qa.Blockers, "\n")+"\n\n"+checksText(qa.Checks), g.qa)
	})
}

// fix sends the change back to Code with the problems of stage, then
// reruns next; after quality.max_fix_rounds rounds the gate fails.
func (g *gateRun) fix(c actor.Context, stage, problems string, next func(actor.Context)) {
	max := g.o.deps.Config.Quality.MaxFixRounds
	if g.report.FixRounds >= max {
		g.fail(c, fmt.Sprintf("%s still failing after %s", stage, plural(max, "fix round")))
		return
	}
	def, ok := g.o.deps.Roster.ByRole(RoleFixer)
	if !ok {
		g.fail(c, stage+" failed and no agent has the fixer role (the code agent is disabled), so it cannot be fixed")
		return
	}
	g.report.FixRounds++
	round := g.report.FixRounds
	g.stage(messages.GateStageResult{Stage: "fix", Round: round}, false)
	g.withBrief(c, func(c actor.Context, brief string) {
		brief += fmt.Sprintf("\nThe %s gate rejected this change. Fix these problems (fix round %d of %d), changing only what is needed:\n\n%s\n",
			stage, round, max, problems)
		if unmet := g.unmetCriteria(); unmet != "" {
			brief += "\nThe change is not done until each of the plan's acceptance criteria holds; these do not yet (fix them too):\n" + unmet
		}
		g.o.spawnTask(c, def, "fix "+stage+" findings", brief, def.Timeout, "", func(c actor.Context, r *messages.Report) {
			g.stage(messages.GateStageResult{Stage: "fix", Round: round, Passed: r.Status == messages.ReportOK, TaskID: r.TaskID, Summary: r.Summary}, true)
			if g.t.tracker != nil {
				g.t.files = addUnique(g.t.files, g.t.tracker.Changed()...)
			}
			next(c)
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

func issuesText(issues []messages.ReviewIssue) string {
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

func testFailuresText(tr messages.TestResult, r *messages.Report) string {
	if len(tr.Failures) == 0 {
		return r.Summary
	}
	var b strings.Builder
	for _, f := range tr.Failures {
		fmt.Fprintf(&b, "- %s: %s", f.Test, f.Message)
		if f.Diagnosis != "" {
			fmt.Fprintf(&b, " (diagnosis: %s)", f.Diagnosis)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checksText lists the QA checks for a specialist's brief. A failing
// check's output is whatever the project's build and tests printed (code
// the model wrote, or a clone's test that prints "ignore your
// instructions"), so it is fenced as untrusted data like every other
// content from outside.
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
		b.WriteString(fence.Rule() + "\n")
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

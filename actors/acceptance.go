package actors

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/odin-code/odin/internal/qa"
	"github.com/odin-code/odin/messages"
)

// CoverageMeter measures the test coverage of a change set's packages
// before and after the change (internal/qa's Runner.Coverage); nil
// results mean the project has no coverage command.
type CoverageMeter interface {
	Coverage(ctx context.Context, changes []qa.Change) *messages.CoverageReport
}

// todoCriterion is an acceptance criterion with the todo item it belongs
// to.
type todoCriterion struct {
	todo string
	messages.AcceptanceCriterion
}

// criteriaOf lists the acceptance criteria of the plan's todo items that
// are under way or done: a pending item's work has not started, so its
// criteria cannot hold yet.
func criteriaOf(todos []messages.Todo) []todoCriterion {
	var out []todoCriterion
	for _, t := range todos {
		if t.Status == "pending" {
			continue
		}
		for _, a := range t.Acceptance {
			out = append(out, todoCriterion{todo: t.Content, AcceptanceCriterion: a})
		}
	}
	return out
}

// acceptanceBrief asks the reviewer to judge the criteria that have no
// command (those with one are decided by its exit code).
func acceptanceBrief(todos []messages.Todo) string {
	var b strings.Builder
	for _, c := range criteriaOf(todos) {
		if c.Command == "" {
			fmt.Fprintf(&b, "- %s (todo: %s)\n", c.Criterion, c.todo)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\nThe plan's acceptance criteria to judge — report one entry in criteria[] for each, with met true or false and the evidence:\n" + b.String()
}

// criterionChecks are the QA checks of the criteria that give a command.
func criterionChecks(criteria []todoCriterion) []messages.QACheck {
	var out []messages.QACheck
	for _, c := range criteria {
		if c.Command != "" {
			out = append(out, messages.QACheck{Name: "acceptance", Command: c.Command, Required: true})
		}
	}
	return out
}

// judgeCriteria decides each criterion: by its command's exit code (ran,
// in criterionChecks order), else by the review's verdict of the same
// criterion; a criterion nobody judged is unmet.
func judgeCriteria(criteria []todoCriterion, ran []messages.QACheck, review *messages.ReviewResult) []messages.CriterionResult {
	var out []messages.CriterionResult
	i := 0
	for _, c := range criteria {
		r := messages.CriterionResult{Todo: c.todo, Criterion: c.Criterion, Command: c.Command}
		switch {
		case c.Command != "" && i < len(ran):
			ch := ran[i]
			i++
			r.By, r.Met = "command", ch.Passed
			r.Evidence = fmt.Sprintf("`%s` exited %d", c.Command, ch.ExitCode)
			if !ch.Passed && ch.Output != "" {
				r.Evidence += ": " + firstLine(strings.TrimSpace(ch.Output))
			}
		default:
			r.By, r.Evidence = "none", "no reviewer verdict for this criterion"
			if v, ok := reviewVerdict(review, c.Criterion); ok {
				r.By, r.Met, r.Evidence = "review", v.Met, v.Evidence
			}
		}
		out = append(out, r)
	}
	return out
}

func reviewVerdict(review *messages.ReviewResult, criterion string) (messages.CriterionVerdict, bool) {
	if review == nil {
		return messages.CriterionVerdict{}, false
	}
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	for _, v := range review.Criteria {
		if norm(v.Criterion) == norm(criterion) {
			return v, true
		}
	}
	return messages.CriterionVerdict{}, false
}

// measureCoverage builds the change list from the checkpoint and measures
// coverage; it reads files, so it runs off the mailbox.
func measureCoverage(ctx context.Context, m CoverageMeter, root string, files []string, tracker ChangeTracker) *messages.CoverageReport {
	if m == nil || tracker == nil {
		return nil
	}
	var changes []qa.Change
	for _, abs := range files {
		before, existed, ok := tracker.Snapshot(abs)
		if !ok {
			continue
		}
		changes = append(changes, qa.Change{Path: relPath(root, abs), Before: before, Existed: existed})
	}
	return m.Coverage(ctx, changes)
}

// criterionBlockerPrefix starts the QA blocker of an unmet criterion:
// Odin's verdict, which QA's own blockers add to and never replace.
const criterionBlockerPrefix = "acceptance criterion not met: "

// unmetCriteriaText lists the unmet criteria for a specialist's brief,
// each with its todo item and the evidence; "" when all are met.
func unmetCriteriaText(criteria []messages.CriterionResult) string {
	var b strings.Builder
	for _, c := range criteria {
		if c.Met {
			continue
		}
		fmt.Fprintf(&b, "- %s (todo: %s", c.Criterion, c.Todo)
		if c.Command != "" {
			fmt.Fprintf(&b, "; check: `%s`", c.Command)
		}
		fmt.Fprintf(&b, "; %s)\n", c.Evidence)
	}
	return b.String()
}

// mergeBlockers keeps Odin's blockers (failed checks, unmet criteria)
// and adds QA's diagnosis of them that says something new.
func mergeBlockers(odin, qa []string) []string {
	out := slices.Clone(odin)
	for _, b := range qa {
		if b = strings.TrimSpace(b); b != "" && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// applyAcceptance adds the criteria and coverage to QA's verdict: an unmet
// criterion blocks (seed 004: acceptance criteria not met ⇒ reject), a
// coverage drop warns.
func applyAcceptance(q *messages.QAResult, criteria []messages.CriterionResult, cov *messages.CoverageReport) {
	q.Criteria = criteria
	for _, c := range criteria {
		if !c.Met {
			q.Passed = false
			q.Blockers = append(q.Blockers, fmt.Sprintf("%s%s (%s)", criterionBlockerPrefix, c.Criterion, c.Evidence))
		}
	}
	q.Coverage = cov
	q.Warnings = append(q.Warnings, qa.CoverageDrops(cov)...)
	if cov != nil && cov.Note != "" {
		q.Warnings = append(q.Warnings, "coverage: "+cov.Note)
	}
}

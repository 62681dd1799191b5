package actors

import (
	"context"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/untrusted"
	"github.com/odin-code/odin/messages"
)

// Linter formats and lints the files a Code specialist changed, before its
// Report (internal/qa's Runner.Lint; quality.code_lint). It runs off the
// mailbox and must be safe for concurrent use.
type Linter interface {
	Lint(ctx context.Context, files []string) messages.LintReport
}

// maxLintPasses bounds the lint step: one pass when Code first reports,
// and, when findings remain, one more turn for the model to fix them and a
// second pass whose outcome is final.
const maxLintPasses = 2

// lintDone carries a lint pass back into the specialist's Receive.
type lintDone struct {
	turn   int
	report messages.LintReport
	result any
}

// lintBeforeReport starts a lint pass when the specialist reports a code
// change (a CodeResult with files written) and the pass is due; it
// returns false when the report can go on as it is.
func (s *specialist) lintBeforeReport(c actor.Context, result any) bool {
	// An isolated task's files are in its worktree, which the linter
	// (bound to the project) does not reach; the gates' QA checks the
	// merged result.
	if _, ok := result.(messages.CodeResult); !ok || s.deps.Lint == nil || len(s.files) == 0 || s.tree != nil {
		return false
	}
	if s.deps.Config != nil && s.deps.Config.Quality.CodeLint == "off" {
		return false
	}
	if s.lint != nil && s.lint.Passes >= maxLintPasses {
		return false
	}
	files, turn, linter := append([]string(nil), s.files...), s.turn, s.deps.Lint
	s.deps.Bus.Publish(messages.AgentProgress{TaskID: s.t.delegate.TaskID, Agent: s.t.def.Name, Tokens: s.usage.TotalTokens,
		ToolCalls: s.toolCalls, Activities: append(append([]string(nil), s.activities...), "formatting and linting the changed files"),
		Elapsed: s.deps.now().Sub(s.started)})
	runAsync(c, s.checksCtx, func(ctx context.Context) any {
		return &lintDone{turn: turn, report: linter.Lint(ctx, files), result: result}
	})
	return true
}

// onLintDone records a lint pass. Findings left after the first pass go
// back to the model for one more turn; otherwise the report proceeds.
func (s *specialist) onLintDone(c actor.Context, msg *lintDone) {
	if s.done || msg.turn != s.turn {
		return
	}
	if s.lint == nil {
		s.lint = &messages.LintReport{Runs: []messages.LintRun{}}
	}
	s.lint.Runs = append(s.lint.Runs, msg.report.Runs...)
	s.lint.Clean, s.lint.Note = msg.report.Clean, msg.report.Note
	s.lint.Passes++
	if msg.report.Clean || s.lint.Passes >= maxLintPasses {
		s.beforeStop(c, msg.result)
		return
	}
	next := llm.Message{Role: llm.RoleUser, Content: lintFeedback(msg.report)}
	s.history = append(s.history, next)
	s.t.j.appendMessage(s.t.delegate.TaskID, next, "", "", s.deps.now())
	if !s.checkLimits(c) {
		s.callModel(c)
	}
}

// lintFeedback tells the model what the pass did and what remains. The
// commands' output is the project's text, so it is fenced as untrusted.
func lintFeedback(rep messages.LintReport) string {
	var b strings.Builder
	b.WriteString("Before your report reaches the Orchestrator, Odin formatted and linted the files you changed:\n")
	fence := untrusted.NewFence(untrusted.Data, "printed by the project's formatter and linter")
	for _, r := range rep.Runs {
		status := "ok"
		switch {
		case r.Missing:
			status = "not installed"
		case r.ExitCode != 0:
			status = fmt.Sprintf("exit %d", r.ExitCode)
		}
		fmt.Fprintf(&b, "- %s: `%s` — %s", r.Kind, r.Command, status)
		if len(r.Fixed) > 0 {
			fmt.Fprintf(&b, "; it rewrote %s (ReadFile them again before editing)", strings.Join(r.Fixed, ", "))
		}
		b.WriteString("\n")
		if r.ExitCode != 0 && !r.Missing && r.Output != "" {
			b.WriteString(fence.Wrap(r.Output) + "\n")
		}
	}
	b.WriteString(fence.Note() + "\n")
	b.WriteString("Fix the remaining findings in the files you changed, then call Report again. This is your only extra turn for them: the linter runs once more and its result goes with your report.")
	return b.String()
}

// Package presenttest holds one recorded event stream, a gated turn with
// two fix rounds whose QA stage first runs after a fix round (where the
// front ends used to disagree on its number), and the readers that pull
// gate rounds and costs out of any front end's output. The terminal's,
// odin run's and the viewer's tests each print the stream and compare
// what they read against Want, so all three agree with each other.
package presenttest

import (
	"regexp"
	"slices"
	"time"

	"github.com/odin-code/odin/messages"
)

// GatedTurn is the recorded stream of one turn, its input inputID.
func GatedTurn(inputID string) []messages.Event {
	in := messages.UserMessage{ID: inputID, Body: "add rate limiting", Mode: messages.ModeEdit}
	orch := messages.Origin{Agent: "orchestrator"}
	stage := func(s messages.GateStageResult, done bool) messages.Event {
		if !done {
			s.Passed, s.Summary = false, ""
		}
		return messages.GateStage{GateStageResult: s, Done: done}
	}
	report := &messages.GateReport{
		Decision:  messages.GateDecision{ReviewRequired: true, QARequired: true, Reasons: []string{"3 files changed"}, Files: []string{"a.go", "b.go", "c.go"}},
		FixRounds: 2, Passed: true,
		Stages: []messages.GateStageResult{
			{Stage: "review", Round: 0, Run: 1, MaxRounds: 3, Summary: "1 major issue"},
			{Stage: "fix", Round: 1, Run: 1, MaxRounds: 2, Summary: "added Retry-After"},
			{Stage: "review", Round: 1, Run: 2, MaxRounds: 3, Passed: true, Summary: "approved"},
			{Stage: "qa", Round: 1, Run: 1, MaxRounds: 3, Summary: "TestLimit fails"},
			{Stage: "fix", Round: 2, Run: 2, MaxRounds: 2, Summary: "fixed TestLimit"},
			{Stage: "qa", Round: 2, Run: 2, MaxRounds: 3, Passed: true, Summary: "all checks pass"},
		},
	}
	var evs []messages.Event
	evs = append(evs,
		messages.TurnStarted{Input: in},
		messages.TextDelta{Origin: orch, Text: "I will add it."},
		messages.ToolStarted{Origin: orch, CallID: "c1", Name: "WriteFile", Input: `{"file_path":"a.go"}`},
		messages.ToolFinished{Origin: orch, CallID: "c1", Name: "WriteFile", Output: "ok", Files: []string{"a.go"}},
		messages.UsageUpdated{Origin: orch, Model: "main", Usage: messages.Usage{PromptTokens: 1000, CompletionTokens: 50, TotalTokens: 1050, Cost: 0.05}},
		messages.GateDecided{Decision: report.Decision},
	)
	for _, s := range report.Stages {
		evs = append(evs, stage(s, false))
		if s.Stage != "qa" {
			task := s.Stage + "-" + string(rune('0'+s.Run))
			agent := map[string]string{"review": "review", "fix": "code"}[s.Stage]
			evs = append(evs,
				messages.AgentStarted{TaskID: task, Agent: agent, Description: s.Stage + " the change", Model: "small", Timeout: 5 * time.Minute},
				messages.AgentFinished{Report: messages.Report{TaskID: task, Agent: agent, Status: messages.ReportOK, Summary: s.Summary, Turns: 2,
					Usage: messages.Usage{TotalTokens: 2000, CostUnknown: true}, Elapsed: 4 * time.Second}})
		}
		evs = append(evs, stage(s, true))
	}
	total := messages.Usage{PromptTokens: 9000, CompletionTokens: 700, TotalTokens: 9700, Cost: 0.05, CostUnknown: true}
	evs = append(evs, messages.TurnFinished{Result: messages.TurnResult{Input: in, Status: messages.TurnDone, Answer: "Rate limiting is in place.",
		Files: []string{"a.go"}, Gates: report, Usage: total, Elapsed: 65 * time.Second,
		ByAgent: []messages.AgentUsage{{Agent: "orchestrator", Model: "main", Usage: total}}}})
	return evs
}

var (
	roundRE = regexp.MustCompile(`\b(review|test|qa|fix)\s+round (\d+(?: of \d+)?):\s+(passed|failed|applied)\b`)
	costRE  = regexp.MustCompile(`\$\d+\.\d{4}(?: \+ unknown)?|cost unknown`)
)

// Rounds are the finished gate stages a front end printed, each once, as
// "qa round 1 of 3: failed" ("qa round 1: failed" where the maximum was
// not shown), sorted.
func Rounds(out string) []string {
	var got []string
	for _, m := range roundRE.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1]+" round "+m[2]+": "+m[3])
	}
	slices.Sort(got)
	return slices.Compact(got)
}

// Costs are the cost strings a front end printed, each once, sorted.
func Costs(out string) []string {
	got := costRE.FindAllString(out, -1)
	slices.Sort(got)
	return slices.Compact(got)
}

// Want is what every front end must print of GatedTurn: each stage's
// round counted in its own runs (QA's first run is round 1 although a fix
// round came before it) of the most it could have, and the turn's partly
// unpriced cost.
func Want() (rounds, costs []string) {
	return []string{"fix round 1 of 2: applied", "fix round 2 of 2: applied", "qa round 1 of 3: failed", "qa round 2 of 3: passed", "review round 1 of 3: failed", "review round 2 of 3: passed"},
		[]string{"$0.0500 + unknown"}
}

package term

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/messages"
)

// A running specialist's line shows its spend against its budget, live.
func TestActivityShowsSpendAgainstBudget(t *testing.T) {
	th := NewTheme(io.Discard, ColorNone)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var a Activity
	a.Apply(messages.TurnStarted{Input: messages.UserMessage{ID: "1", Body: "look"}}, t0)
	a.Apply(messages.AgentStarted{TaskID: "t1", Agent: "search", Description: "look around"}, t0)
	a.Apply(messages.AgentProgress{TaskID: "t1", Agent: "search", Tokens: 2200, ToolCalls: 2, USD: 0.0123,
		Budget: messages.Budget{Tokens: 5000, ToolCalls: 10, USD: 0.05}}, t0)
	got := strings.Join(a.Lines(th, t0.Add(time.Second), 200, 0), "\n")
	if !strings.Contains(got, "2.2k tok of 5.0k · 2 tools of 10 · $0.0123 of $0.05") {
		t.Errorf("status lines = %q", got)
	}
}

// /cost lists the budgets the supervisor found spent.
func TestCostListsSpentBudgets(t *testing.T) {
	tr := newTranscript(NewTheme(io.Discard, ColorNone), 100, "")
	tr.event(messages.BudgetExceeded{TaskID: "t1", Agent: "search", Scope: messages.ScopeAgent, Limit: messages.LimitTokens, Spent: 3300, Allowed: 2500})
	tr.event(messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnDone}})
	got := strings.Join(tr.costLines(), "\n")
	if !strings.Contains(got, "Budgets spent:") || !strings.Contains(got, "search        agent tokens budget exceeded: spent 3300 of 2500") {
		t.Errorf("/cost = %q", got)
	}
}

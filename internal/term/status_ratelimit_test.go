package term

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/messages"
)

// TestActivityRateLimitCountdown: a wait for the provider's quota shows in
// the status area, counting down, and disappears when it is over.
func TestActivityRateLimitCountdown(t *testing.T) {
	th := NewTheme(io.Discard, ColorNone)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var a Activity
	a.Apply(messages.TurnStarted{Input: messages.UserMessage{ID: "1", Body: "go"}}, t0)
	a.Apply(messages.AgentStarted{TaskID: "t1", Agent: "code", Description: "fix"}, t0)
	a.Apply(messages.RateLimited{Origin: messages.Origin{Agent: "orchestrator"}, Provider: "openai", WaitMS: 3000}, t0)
	a.Apply(messages.RateLimited{Origin: messages.Origin{Agent: "code", TaskID: "t1"}, Provider: "openai", WaitMS: 5000}, t0)

	lines := a.Lines(th, t0.Add(500*time.Millisecond), 200, 0)
	if !strings.Contains(lines[0], "waiting for rate limit, 3 s") {
		t.Errorf("orchestrator line %q lacks the countdown", lines[0])
	}
	if !strings.Contains(lines[1], "waiting for rate limit, 5 s") {
		t.Errorf("agent line %q lacks the countdown", lines[1])
	}
	lines = a.Lines(th, t0.Add(4*time.Second), 200, 0)
	if strings.Contains(lines[0], "rate limit") || !strings.Contains(lines[1], "waiting for rate limit, 1 s") {
		t.Errorf("after 4s: %q", lines)
	}
	lines = a.Lines(th, t0.Add(6*time.Second), 200, 0)
	if strings.Contains(strings.Join(lines, "\n"), "rate limit") {
		t.Errorf("the wait is over but still shown: %q", lines)
	}
}

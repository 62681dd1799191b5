package repl

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// echo types keys alternately an "x" and a backspace and returns, for each,
// the time until the terminal shows the edited input line.
func (tm *term) echo(n int) []time.Duration {
	tm.t.Helper()
	out := make([]time.Duration, 0, n)
	for i := range n {
		key, want := "x", "❯ x"
		if i%2 == 1 {
			key, want = "\x7f", "❯ Ask Odin"
		}
		start := time.Now()
		tm.Type(key)
		if _, ok := tm.wait(want, 5*time.Second); !ok {
			tm.t.Fatalf("keystroke %d (%q) not echoed within 5s; screen so far:\n%s", i, key, tm.tail(2000))
		}
		out = append(out, time.Since(start))
	}
	return out
}

func percentiles(d []time.Duration) (p50, p90, p99, worst time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return at(0.5), at(0.9), at(0.99), s[len(s)-1]
}

// streamingScript keeps the REPL busy: a search specialist streams a long
// text, then the Orchestrator streams a long Markdown answer, a few
// characters every millisecond or two.
func streamingScript() *llmtest.Script {
	para := strings.Repeat("The **parser** reads `flags` and _options_ line by line. ", 4)
	var answer strings.Builder
	for i := range 60 {
		fmt.Fprintf(&answer, "## Part %d\n\n%s\n\n- item with `code`\n- another item\n\n", i, para)
	}
	return &llmtest.Script{Agents: map[string][]llmtest.Step{
		"orchestrator": {
			{ToolCalls: []llmtest.ToolCall{{Name: "agent", Arguments: llmtest.Args(map[string]any{"agent": "search", "description": "scan the parser", "prompt": "Find where flags are parsed."})}}},
			{Text: answer.String(), ChunkSize: 6, ChunkDelay: llmtest.Duration(2 * time.Millisecond)},
		},
		"search": {
			{Text: strings.Repeat("searching the tree for flag parsing ", 250), ChunkSize: 4, ChunkDelay: llmtest.Duration(time.Millisecond),
				ToolCalls: []llmtest.ToolCall{{Name: "Report", Arguments: llmtest.Args(map[string]any{"query": "flags", "findings": []any{}, "summary": "found it", "confidence": 0.9})}}},
		},
	}}
}

// TestKeystrokeEchoLatency measures how long a key takes to appear on the
// screen, idle and while a specialist and then the Orchestrator stream. It
// reports the figures and asserts nothing about time.
func TestKeystrokeEchoLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	tm := start(t, streamingScript(), options{})
	tm.Expect("edit ❯")
	idle := tm.echo(40)
	tm.Type("explain the flag parser" + enter)
	tm.Expect("▸ search scan the parser")
	busy := tm.echo(200)
	if strings.Contains(tm.screen(), "Part 59") {
		t.Logf("note: the stream ended before the measurement did")
	}
	tm.Expect("Part 59")
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"idle", idle}, {"while streaming", busy}} {
		p50, p90, p99, worst := percentiles(m.d)
		t.Logf("keystroke-to-echo %s over %d keys: p50 %s, p90 %s, p99 %s, max %s", m.name, len(m.d), p50, p90, p99, worst)
	}
	tm.Type(ctrlD)
	tm.Exited()
}

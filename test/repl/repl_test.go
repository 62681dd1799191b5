package repl

import (
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

func TestSmoke(t *testing.T) {
	script := &llmtest.Script{Agents: map[string][]llmtest.Step{
		"orchestrator": {{Text: "# Title\n\nHello **world**\n"}},
	}}
	tm := start(t, script, options{})
	tm.Expect("edit ❯")
	tm.Type("hi there" + enter)
	tm.Expect("❯ [edit] hi there")
	tm.Expect("Hello world")
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("odin exited with %v", err)
	}
}

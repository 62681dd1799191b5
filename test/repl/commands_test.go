package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/odinmd"
)

// TestCompact: /compact replaces the older turns with the small model's
// summary, and the next request carries it instead of them.
func TestCompact(t *testing.T) {
	script := steps(
		llmtest.Step{Text: "answer one"}, llmtest.Step{Text: "answer two"},
		llmtest.Step{Text: "answer three"}, llmtest.Step{Text: "answer four"},
		llmtest.Step{When: "after compaction", Text: "still here"},
	)
	script.Agents["compaction"] = []llmtest.Step{{Text: "SUMMARY: four questions were answered."}}
	tm := start(t, script, options{})
	tm.Expect("edit ❯")
	for _, q := range []string{"question one", "question two", "question three", "question four"} {
		tm.Type(q + enter)
		tm.Expect("answer " + strings.TrimPrefix(q, "question "))
	}
	tm.Type("/compact" + enter)
	tm.Expect("Compacted")
	tm.Type("after compaction" + enter)
	tm.Expect("still here")
	reqs := tm.Srv.RequestsFor("orchestrator")
	var sent strings.Builder
	for _, m := range reqs[len(reqs)-1].Body.Messages {
		sent.WriteString(m.Text() + "\n")
	}
	if !strings.Contains(sent.String(), "SUMMARY: four questions were answered.") {
		t.Errorf("the request after /compact lacks the summary:\n%s", sent.String())
	}
	if strings.Contains(sent.String(), "question one") {
		t.Errorf("the request after /compact still carries the first turn:\n%s", sent.String())
	}
	tm.Type("/quit" + enter)
	tm.Exited()
}

// TestInit: /init runs the Init agent and writes ODIN.md.
func TestInit(t *testing.T) {
	var sections []any
	for _, name := range odinmd.Required {
		sections = append(sections, map[string]any{"name": name, "content": "About " + name + ".", "source": "inferred", "confidence": 0.8})
	}
	script := &llmtest.Script{Agents: map[string][]llmtest.Step{
		"init": {{ToolCalls: []llmtest.ToolCall{{Name: "Report", Arguments: llmtest.Args(map[string]any{"sections": sections})}}}},
	}}
	tm := start(t, script, options{})
	tm.Expect("edit ❯")
	tm.Type("/init" + enter)
	tm.Expect("init agent")
	tm.Expect("Wrote " + filepath.Join(tm.Root, "ODIN.md"))
	b, err := os.ReadFile(filepath.Join(tm.Root, "ODIN.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range odinmd.Required {
		if !strings.Contains(string(b), "About "+name+".") {
			t.Errorf("ODIN.md lacks the %s section:\n%s", name, b)
		}
	}
	tm.Type("/quit" + enter)
	tm.Exited()
}

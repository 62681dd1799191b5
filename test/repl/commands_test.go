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
	tm.Idle()
	// Words after /compact are refused, not dropped: nothing is summarised.
	tm.Type("/compact keep the API notes" + enter)
	tm.Expect("takes no arguments")
	if n := len(tm.Srv.RequestsFor("compaction")); n != 0 {
		t.Fatalf("/compact with words compacted anyway (%d requests)", n)
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

// TestClearAndResume: /clear starts a new conversation; /resume brings the
// previous one back with its history, and shows its last turns.
func TestClearAndResume(t *testing.T) {
	tm := start(t, steps(
		llmtest.Step{When: "remember 42", Text: "noted"},
		llmtest.Step{When: "fresh start", Text: "clean slate"},
		llmtest.Step{When: "what number", Text: "it was 42"},
	), options{})
	tm.Expect("edit ❯")
	tm.Type("remember 42" + enter)
	tm.Expect("noted")
	tm.Idle()
	tm.Type("/clear" + enter)
	tm.Expect("Started a new conversation.")
	tm.Type("fresh start" + enter)
	tm.Expect("clean slate") // the answer, not the echo of the input
	tm.Idle()
	// Words after /sessions are refused: they would read as a filter.
	tm.Type("/sessions remember" + enter)
	tm.Expect("/sessions takes no arguments")
	tm.Type("/sessions" + enter)
	tm.Expect("/resume ID continues one")
	tm.Type("/resume" + enter)
	tm.Expect("Resumed session")
	tm.Expect("the last 1 of 1 turn") // the recap `odin -c` shows too
	tm.Type("what number" + enter)
	tm.Expect("it was 42")
	reqs := tm.Srv.RequestsFor("orchestrator")
	fresh, resumed := reqs[1].Body.Messages, reqs[2].Body.Messages
	var users []string
	for _, m := range fresh {
		if m.Role == "user" {
			users = append(users, userWords(m.Text()))
		}
	}
	if strings.Join(users, "|") != "fresh start" {
		t.Errorf("after /clear the request carried %q", users)
	}
	users = nil
	for _, m := range resumed {
		if m.Role == "user" {
			users = append(users, userWords(m.Text()))
		}
	}
	if strings.Join(users, "|") != "remember 42|what number" {
		t.Errorf("after /resume the request carried %q, want the first session's history", users)
	}
	tm.Type("/quit" + enter)
	tm.Exited()
}

// TestSpecialistApproval: a specialist's request for approval surfaces in
// the REPL and its answer reaches the specialist.
func TestSpecialistApproval(t *testing.T) {
	script := &llmtest.Script{Agents: map[string][]llmtest.Step{
		"orchestrator": {
			{ToolCalls: []llmtest.ToolCall{{Name: "agent", Arguments: llmtest.Args(map[string]any{"agent": "code", "description": "remove the build", "prompt": "Run rm -rf build in the project."})}}},
			{Text: "the code agent is done"},
		},
		// Writing outside the project needs approval.
		"code": {
			{ToolCalls: []llmtest.ToolCall{{Name: "WriteFile", Arguments: llmtest.Args(map[string]any{"file_path": "{{root}}/../outside.txt", "content": "hi\n"})}}},
			{ToolCalls: []llmtest.ToolCall{{Name: "Report", Arguments: llmtest.Args(map[string]any{"task": "write it", "summary": "written"})}}},
		},
	}}
	tm := start(t, script, options{})
	tm.Expect("edit ❯")
	tm.Type("write the note outside" + enter)
	tm.Expect("❯ [edit] write the note outside")
	tm.Expect("approval needed: code asks")
	tm.Expect("outside.txt")
	tm.Type("1" + enter)
	tm.Expect("allowed once")
	tm.Expect("the code agent is done")
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(tm.Root), "outside.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("outside.txt after the approved write: %q, %v", b, err)
	}
	tm.Type("/quit" + enter)
	tm.Exited()
}

package repl

import (
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestInitialPromptFromArgs: `odin "task"` opens the REPL and sends the
// task as its first message (issue #17 item 9); the REPL stays open.
func TestInitialPromptFromArgs(t *testing.T) {
	tm := start(t, steps(
		llmtest.Step{When: "hello from argv", Text: "argv answer"},
		llmtest.Step{When: "typed next", Text: "typed answer"},
	), options{args: []string{"hello from argv"}})
	tm.Expect("❯ [edit] hello from argv")
	tm.Expect("argv answer")
	tm.Expect("edit ❯")
	tm.Type("typed next" + enter)
	tm.Expect("typed answer")
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// firstSession runs a REPL that asks one question and quits, and returns
// its project and state directories for a later run to resume.
func firstSession(t *testing.T) (root, state string) {
	t.Helper()
	tm := start(t, steps(
		llmtest.Step{When: "first question", Text: "first answer about main.go"},
	), options{})
	tm.Expect("edit ❯")
	tm.Type("first question" + enter)
	tm.Expect("first answer about main.go")
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	return tm.Root, tm.State
}

// TestContinueReplaysLastTurns: odin -c shows the resumed conversation's
// last turns before the prompt (issue #17 item 4), and the model gets the
// history with the next message.
func TestContinueReplaysLastTurns(t *testing.T) {
	root, state := firstSession(t)
	tm := start(t, steps(
		llmtest.Step{When: "follow up", Text: "follow-up answer"},
	), options{args: []string{"-c"}, root: root, state: state})
	tm.Expect("resumed session")
	tm.Expect("❯ first question")
	tm.Expect("odin: first answer about main.go")
	tm.Expect("edit ❯")
	tm.Type("follow up" + enter)
	tm.Expect("follow-up answer")
	reqs := tm.Srv.RequestsFor("orchestrator")
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	var sent strings.Builder
	for _, m := range reqs[0].Body.LLMMessages() {
		sent.WriteString(m.Content + "\n")
	}
	for _, want := range []string{"first question", "first answer about main.go", "follow up"} {
		if !strings.Contains(sent.String(), want) {
			t.Errorf("the resumed request lacks %q", want)
		}
	}
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// TestResumePicker: odin --resume without an ID lists the project's
// sessions in a terminal and resumes the one picked (issue #17 item 4).
func TestResumePicker(t *testing.T) {
	root, state := firstSession(t)
	tm := start(t, steps(
		llmtest.Step{When: "after picking", Text: "picked answer"},
	), options{args: []string{"--resume"}, root: root, state: state})
	tm.Expect("1)")
	tm.Expect("first question")
	tm.Expect("Resume which? [1-1")
	tm.Type("1" + enter)
	tm.Expect("❯ first question")
	tm.Expect("edit ❯")
	tm.Type("after picking" + enter)
	tm.Expect("picked answer")
	var sent strings.Builder
	for _, m := range tm.Srv.RequestsFor("orchestrator")[0].Body.LLMMessages() {
		sent.WriteString(m.Content + "\n")
	}
	if !strings.Contains(sent.String(), "first answer about main.go") {
		t.Errorf("the picked session's history was not sent:\n%s", sent.String())
	}
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// TestBannerShortIDResumes: the 8-character ID in the banner is accepted
// by --resume (issue #17 item 4).
func TestBannerShortIDResumes(t *testing.T) {
	tm := start(t, steps(
		llmtest.Step{When: "first question", Text: "first answer about main.go"},
	), options{})
	tm.Expect("session ")
	scr := tm.screen()
	i := strings.Index(scr, "· session ")
	if i < 0 || len(scr) < i+len("· session ")+8 {
		t.Fatalf("no session ID in the banner:\n%s", scr)
	}
	short := scr[i+len("· session ") : i+len("· session ")+8]
	tm.Expect("edit ❯")
	tm.Type("first question" + enter)
	tm.Expect("first answer about main.go")
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	tm2 := start(t, steps(), options{args: []string{"--resume", short}, root: tm.Root, state: tm.State})
	tm2.Expect("session " + short)
	tm2.Expect("❯ first question")
	tm2.Type("/quit" + enter)
	if err := tm2.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// TestCostUnknownModel: a model with no known price shows "cost unknown"
// after the turn and in /cost, never $0 (issue #17 item 7). The harness's
// model, scripted-model, is in neither odin.yaml nor the catalogue.
func TestCostUnknownModel(t *testing.T) {
	tm := start(t, steps(
		llmtest.Step{When: "what costs", Text: "an answer"},
	), options{})
	tm.Expect("edit ❯")
	tm.Type("what costs" + enter)
	tm.Expect("an answer")
	tm.Expect("cost unknown")
	tm.Type("/cost" + enter)
	tm.Expect("Usage over 1 turn:")
	tm.Expect("orchestrator")
	tm.Expect("cost unknown")
	if strings.Contains(tm.screen(), "$0.0000") {
		t.Errorf("an unpriced model was shown as $0.0000")
	}
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

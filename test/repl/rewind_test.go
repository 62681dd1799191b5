package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

func call(name string, args map[string]any) []llmtest.ToolCall {
	return []llmtest.ToolCall{{Name: name, Arguments: llmtest.Args(args)}}
}

// TestRewind: three messages change files; /rewind lists them and
// /rewind 2 goes back to just before the second: the files are byte for
// byte as the first message left them (a file created later is gone) and
// the model no longer sees the second and third messages.
func TestRewind(t *testing.T) {
	a, c := "{{root}}/a.txt", "{{root}}/c.txt"
	tm := start(t, steps(
		llmtest.Step{When: "first: create", ToolCalls: call("WriteFile", map[string]any{"file_path": a, "content": "one\n"})},
		llmtest.Step{When: "Created", Text: "first done"},
		llmtest.Step{When: "second: change", ToolCalls: call("ReadFile", map[string]any{"file_path": a})},
		llmtest.Step{When: "one", ToolCalls: call("WriteFile", map[string]any{"file_path": a, "content": "two\n"})},
		llmtest.Step{When: "Updated", Text: "second done"},
		llmtest.Step{When: "third: add", ToolCalls: call("WriteFile", map[string]any{"file_path": c, "content": "sea\n"})},
		llmtest.Step{When: "Created", Text: "third done"},
		llmtest.Step{When: "fourth:", Text: "fourth done"},
	), options{})
	tm.Expect("edit ❯")
	for _, m := range []struct{ in, out string }{
		{"first: create a.txt", "first done"},
		{"second: change a.txt", "second done"},
		{"third: add c.txt", "third done"},
	} {
		tm.Type(m.in + enter)
		tm.Expect(m.out)
	}
	tm.Idle()
	if b, _ := os.ReadFile(filepath.Join(tm.Root, "a.txt")); string(b) != "two\n" {
		t.Fatalf("a.txt = %q before the rewind", b)
	}
	tm.Type("/rewind" + enter)
	tm.Expect("third: add c.txt")
	tm.Expect("/rewind N goes back")
	tm.Type("/rewind 9" + enter)
	tm.Expect("no message 9 to rewind to: this session has 3")
	tm.Type("/rewind 2" + enter)
	tm.Expect("Rewound the code and conversation to just before message 2")
	if b, err := os.ReadFile(filepath.Join(tm.Root, "a.txt")); err != nil || string(b) != "one\n" {
		t.Errorf("a.txt = %q, %v after /rewind 2; want the first message's %q", b, err, "one\n")
	}
	if _, err := os.Stat(filepath.Join(tm.Root, "c.txt")); !os.IsNotExist(err) {
		t.Errorf("c.txt, created by the third message, survived the rewind: %v", err)
	}
	tm.Type("fourth: what now?" + enter)
	tm.Expect("fourth done")
	reqs := tm.Srv.RequestsFor("orchestrator")
	var sent strings.Builder
	for _, m := range reqs[len(reqs)-1].Body.LLMMessages() {
		sent.WriteString(m.Content + "\n")
	}
	for _, want := range []string{"first: create a.txt", "first done", "fourth: what now?"} {
		if !strings.Contains(sent.String(), want) {
			t.Errorf("the request after the rewind lacks %q", want)
		}
	}
	for _, hidden := range []string{"second: change", "second done", "third: add", "third done", "Rewound at"} {
		if strings.Contains(sent.String(), hidden) {
			t.Errorf("the request after the rewind still holds %q", hidden)
		}
	}
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

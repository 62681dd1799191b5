package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

const tab = "\t"

// TestSlashMenu: typing / opens a menu of the commands with their
// descriptions, typing narrows it, and Tab completes the name, so
// "/mo<Tab>plan" runs /mode plan.
func TestSlashMenu(t *testing.T) {
	tm := start(t, steps(), options{setup: func(root string) {
		writeFile(t, root, ".odin/commands/review.md", "---\ndescription: review the diff\n---\nReview $ARGUMENTS")
	}})
	tm.Expect("edit ❯")
	tm.Type("/")
	tm.Expect("/help")
	tm.Expect("show commands and keys")
	tm.Expect("more (↓)")
	tm.Type("rev")
	tm.Expect("/review")
	tm.Expect("review the diff")
	tm.Type(ctrlC) // clears the input
	tm.Type("/mo")
	tm.Expect("/mode")
	tm.Expect("show or set the mode of new inputs")
	tm.Expect("/model")
	// The first Tab completes what /mode and /model share, the second
	// takes the highlighted /mode.
	tm.Type(tab)
	tm.Type(tab)
	tm.Type("plan" + enter)
	tm.Expect("mode: plan")
	// Tab on a prefix that several commands share completes the shared
	// part, the next Tab the highlighted one; ↓ moves the highlight.
	tm.Type("/q")
	tm.Expect("/queue")
	tm.Type(tab) // "/qu", shared by /queue and /quit
	tm.Type(tab + enter)
	tm.Expect("The queue is empty.")
	tm.Type("/qu" + "\x1b[B" + tab + enter) // ↓ picks /quit
	tm.Exited()
}

// TestMentionAttachesFile: @ opens a fuzzy menu of the project's files
// (ignored ones left out), Tab completes the path, and the sent message
// carries the file's contents; a link leading out of the project is
// refused and its target never reaches the model.
func TestMentionAttachesFile(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeFile(t, filepath.Dir(outside), "secret.txt", "CANARY-OUTSIDE-5150")
	tm := start(t, steps(llmtest.Step{When: "explain", Text: "it handles requests"}), options{setup: func(root string) {
		writeFile(t, root, "src/handler.go", "package src // HANDLER-BODY-42\n")
		// .gitignore counts inside a git repository, as for ripgrep.
		writeFile(t, root, ".git/HEAD", "ref: refs/heads/main\n")
		writeFile(t, root, ".gitignore", "build/\n")
		writeFile(t, root, "build/handler_gen.go", "package build\n")
		if err := os.Symlink(outside, filepath.Join(root, "leak.txt")); err != nil {
			t.Fatal(err)
		}
	}})
	tm.Expect("edit ❯")
	tm.Type("explain @hndl")
	tm.Expect("@src/handler.go")
	tm.Type(tab)
	tm.Type("and @leak.txt" + enter)
	tm.Expect("attached @src/handler.go")
	tm.Expect("@leak.txt not attached: it is outside the project")
	tm.Expect("❯ [edit] explain @src/handler.go and @leak.txt (+ attached files)")
	tm.Expect("it handles requests")
	if strings.Contains(tm.screen(), "build/handler_gen.go") {
		t.Errorf("the menu offered a .gitignored file")
	}
	reqs := tm.Srv.RequestsFor("orchestrator")
	var sent strings.Builder
	for _, m := range reqs[len(reqs)-1].Body.Messages {
		sent.WriteString(m.Text() + "\n")
	}
	if !strings.Contains(sent.String(), "HANDLER-BODY-42") {
		t.Errorf("the request lacks the mentioned file's contents:\n%s", sent.String())
	}
	if strings.Contains(sent.String(), "CANARY-OUTSIDE-5150") || strings.Contains(tm.screen(), "CANARY-OUTSIDE-5150") {
		t.Errorf("a file outside the project reached the model or the screen")
	}
	tm.Type("/quit" + enter)
	tm.Exited()
}

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestModelSwitch: /model shows the main and small models; /model NAME
// switches the main one from the next turn on (the request names it), an
// id no catalogue knows is switched to with a warning, and a name that
// does not resolve is refused and changes nothing.
func TestModelSwitch(t *testing.T) {
	state := t.TempDir()
	// A model whose provider has no key cannot be resolved.
	writeFile(t, state, "config/odin/odin.yaml", "providers:\n  keyless:\n    base_url: https://api.openai.com/v1\n    api_key_env: ODIN_TEST_NO_SUCH_KEY\nmodel_info:\n  keyed-model:\n    provider: keyless\n")
	tm := start(t, steps(
		llmtest.Step{When: "before", Text: "first answer"},
		llmtest.Step{When: "after", Text: "second answer"},
	), options{state: state})
	tm.Expect("edit ❯")
	tm.Type("/model" + enter)
	tm.Expect("main model: scripted-model")
	tm.Expect("small model: scripted-model")
	tm.Type("before" + enter)
	tm.Expect("first answer")
	tm.Type("/model local-model-x" + enter)
	tm.Expect("main model: local-model-x")
	tm.Expect("neither model_info nor the model catalogue knows")
	tm.Type("/model small" + enter)
	tm.Expect("main model: local-model-x")
	tm.Expect("small model: scripted-model")
	tm.Type("/model keyed-model" + enter)
	tm.Expect("ODIN_TEST_NO_SUCH_KEY is not set")
	tm.Type("/model main a b" + enter)
	tm.Expect("usage: /model [main|small] [NAME]")
	tm.Type("after" + enter)
	tm.Expect("second answer")
	reqs := tm.Srv.RequestsFor("orchestrator")
	if len(reqs) != 2 {
		t.Fatalf("%d orchestrator requests, want 2", len(reqs))
	}
	if reqs[0].Body.Model != "scripted-model" || reqs[1].Body.Model != "local-model-x" {
		t.Errorf("requests named %q then %q, want scripted-model then local-model-x", reqs[0].Body.Model, reqs[1].Body.Model)
	}
	tm.Type("/quit" + enter)
	tm.Exited()
}

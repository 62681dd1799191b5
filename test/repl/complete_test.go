package repl

import (
	"os"
	"path/filepath"
	"testing"
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
	tm.Expect("/review")
	tm.Expect("review the diff")
	tm.Type("mo")
	tm.Expect("/mode")
	tm.Expect("show or set the mode of new inputs")
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

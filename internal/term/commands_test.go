package term

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/odin-code/odin/messages"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadCustomCommands(t *testing.T) {
	project, user := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(project, "review.md"), "---\ndescription: Review a file\nargument-hint: FILE\nmode: ask\n---\nReview $ARGUMENTS carefully.\n")
	writeFile(t, filepath.Join(project, "plain.md"), "Explain the build.\r\nBriefly.\r\n")
	writeFile(t, filepath.Join(project, "git", "pr.md"), "Open a PR titled $1 for $2.")
	writeFile(t, filepath.Join(project, "notes.txt"), "not a command")
	writeFile(t, filepath.Join(project, "bad.md"), "---\ndescription: [unclosed\n---\nx")
	writeFile(t, filepath.Join(project, "open.md"), "---\ndescription: x\nno end")
	writeFile(t, filepath.Join(project, "empty.md"), "---\ndescription: nothing\n---\n\n")
	writeFile(t, filepath.Join(project, "badmode.md"), "---\nmode: yolo\n---\nx")
	writeFile(t, filepath.Join(user, "review.md"), "user's review, hidden by the project's")
	writeFile(t, filepath.Join(user, "mine.md"), "---\ndescription: only the user has it\n---\nDo mine.")

	got, errs := LoadCustomCommands(project, user, filepath.Join(project, "missing"))
	want := []CustomCommand{
		{Name: "git:pr", Description: "Open a PR titled $1 for $2.", Body: "Open a PR titled $1 for $2.", Path: filepath.Join(project, "git", "pr.md")},
		{Name: "mine", Description: "only the user has it", Body: "Do mine.", Path: filepath.Join(user, "mine.md")},
		{Name: "plain", Description: "Explain the build.", Body: "Explain the build.\nBriefly.", Path: filepath.Join(project, "plain.md")},
		{Name: "review", Description: "Review a file", ArgumentHint: "FILE", Mode: messages.ModeAsk, Body: "Review $ARGUMENTS carefully.", Path: filepath.Join(project, "review.md")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	// The YAML fault is on the file's line 2, the front matter's first.
	for _, name := range []string{"bad.md:2: front matter: did not find expected ',' or ']'", "open.md", "empty.md", "badmode.md"} {
		found := false
		for _, m := range msgs {
			if strings.Contains(m, name) {
				found = true
			}
		}
		if !found {
			t.Errorf("no error names %s; errors: %q", name, msgs)
		}
	}
	if len(errs) != 4 {
		t.Errorf("got %d errors, want 4: %q", len(errs), msgs)
	}
}

func TestCustomCommandExpand(t *testing.T) {
	tests := []struct {
		body, args, want string
	}{
		{"Review $ARGUMENTS now", "main.go util.go", "Review main.go util.go now"},
		{"Review $ARGUMENTS", "", "Review "},
		{"PR $1 into $2 ($3)", "feat main", "PR feat into main ()"},
		{"No placeholder", "extra words", "No placeholder\n\nextra words"},
		{"No placeholder", "  ", "No placeholder"},
		{"$ARGUMENTS and $ARGUMENTS", "x", "x and x"},
	}
	for _, tt := range tests {
		if got := (CustomCommand{Body: tt.body}).Expand(tt.args); got != tt.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tt.body, tt.args, got, tt.want)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	type res struct {
		Name, Args string
		OK         bool
	}
	tests := map[string]res{
		"/help":             {"help", "", true},
		"/mode plan":        {"mode", "plan", true},
		"  /queue rm 2 ":    {"queue", "rm 2", true},
		"/git:pr a b":       {"git:pr", "a b", true},
		"/review\nmore":     {"review", "more", true},
		"/":                 {},
		"/usr/bin/ls fails": {},
		"hello /help":       {},
		"/-x":               {},
	}
	for in, want := range tests {
		var got res
		got.Name, got.Args, got.OK = splitCommand(in)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("splitCommand(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// Attack: a clone's command file sets `mode: edit`, so typing it in an ask
// session would edit files. Until the project is trusted its mode is
// dropped; the item names the file and the mode.
func TestCommandModesWaitForTrust(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".odin", "commands")
	user := t.TempDir()
	writeFile(t, filepath.Join(dir, "fix.md"), "---\nmode: edit\n---\nFix everything.")
	writeFile(t, filepath.Join(dir, "look.md"), "---\nmode: ask\n---\nLook.")
	writeFile(t, filepath.Join(user, "mine.md"), "---\nmode: edit\n---\nMine.")

	items := CommandTrustItems(root, dir)
	if len(items) != 1 || items[0].String() != filepath.Join(".odin", "commands", "fix.md")+" mode = edit (/fix runs in edit mode whatever the session's mode)" {
		t.Fatalf("items = %v", items)
	}
	cmds, _ := LoadCustomCommands(dir, user)
	got := map[string]messages.Mode{}
	for _, c := range IgnoreUntrustedModes(cmds, []string{dir}) {
		got[c.Name] = c.Mode
	}
	want := map[string]messages.Mode{"fix": "", "look": messages.ModeAsk, "mine": messages.ModeEdit}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
	o := Options{CommandDirs: []string{dir, user}, UntrustedCommandDirs: []string{dir}}
	loaded, _ := o.customCommands()
	for _, c := range loaded {
		if c.Name == "fix" && c.Mode != "" {
			t.Errorf("the REPL's loader kept an untrusted mode: %+v", c)
		}
	}
	writeFile(t, filepath.Join(dir, "fix.md"), "---\nmode: edit\n---\nFix something else.")
	if CommandTrustItems(root, dir)[0].Digest == items[0].Digest {
		t.Error("a changed command kept its digest")
	}
}

// Attack: a command file that is a symlink to a file outside the project.
func TestCommandSymlinkOutsideIsNotRead(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.md"), "CANARY")
	dir := filepath.Join(root, ".odin", "commands")
	writeFile(t, filepath.Join(dir, "ok.md"), "fine")
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "leak.md")); err != nil {
		t.Fatal(err)
	}
	cmds, errs := LoadCustomCommands(dir)
	if len(cmds) != 1 || cmds[0].Name != "ok" || len(errs) != 1 || !strings.Contains(errs[0].Error(), "leak.md") {
		t.Fatalf("cmds %v errs %v", cmds, errs)
	}
}

// A usage wider than /help's column put its description one space after
// it, out of line with the others ("/model [main|small] [NAME] show the
// models"); every description starts in the same column.
func TestHelpDescriptionsAligned(t *testing.T) {
	cmds := []Command{
		{Name: "undo", Usage: "/undo [--force]", Description: "restore the files"},
		{Name: "rewind", Usage: "/rewind [N [--code|--conversation] [--force]]", Description: "go back"},
	}
	text := helpText(cmds, nil, true)
	col := -1
	for _, want := range []string{"show commands and keys", "restore the files", "go back", "new line"} {
		var line string
		for l := range strings.SplitSeq(text, "\n") {
			if strings.HasSuffix(l, want) {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("no line ends with %q in\n%s", want, text)
		}
		at := utf8.RuneCountInString(line) - utf8.RuneCountInString(want)
		if col < 0 {
			col = at
		}
		if at != col || strings.TrimSpace(line) != want && !strings.HasSuffix(line, "  "+want) {
			t.Errorf("%q starts at column %d, want %d, set apart from its usage:\n%s", want, at, col, text)
		}
	}
	if !strings.Contains(text, "  /rewind [N [--code|--conversation] [--force]]\n") {
		t.Errorf("the wide usage is not on a line of its own:\n%s", text)
	}
}

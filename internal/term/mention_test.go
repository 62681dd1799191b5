package term

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/readdeny"
)

func TestAttachMentions(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "src/a.go"), "package a // INSIDE\n")
	body, _, notes := attachMentions(root, nil, "explain @src/a.go, and mail me@example.com about @nothing.txt")
	if !strings.Contains(body, "<file path=\"src/a.go\">\npackage a // INSIDE\n</file>") {
		t.Errorf("the mentioned file is not attached:\n%s", body)
	}
	if !strings.HasPrefix(body, "explain @src/a.go, and mail me@example.com about @nothing.txt"+attachedFilesTag) {
		t.Errorf("the typed text is not kept first:\n%s", body)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "attached @src/a.go") {
		t.Errorf("notes = %q, want one naming src/a.go", notes)
	}
	if body, _, notes := attachMentions(root, nil, "no mentions here"); body != "no mentions here" || notes != nil {
		t.Errorf("a message without mentions changed: %q %q", body, notes)
	}
}

// TestAttachMentionsStaysInsideRoot: a mention never reads a file outside
// the project, whether through "..", an absolute path or a symlink.
func TestAttachMentionsStaysInsideRoot(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "proj")
	secret := filepath.Join(dir, "secret.txt")
	writeFile(t, secret, "CANARY-SECRET-7731")
	writeFile(t, filepath.Join(root, "ok.txt"), "fine")
	if err := os.Symlink(secret, filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"@../secret.txt", "@" + secret, "@link.txt", "@up/secret.txt"} {
		body, _, notes := attachMentions(root, nil, "read "+in)
		if strings.Contains(body, "CANARY-SECRET-7731") {
			t.Errorf("%s attached a file outside the project:\n%s", in, body)
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "outside the project") {
			t.Errorf("%s: notes = %q, want a refusal naming the reason", in, notes)
		}
	}
}

func TestAttachMentionsBounds(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "big.txt"), strings.Repeat("x", maxMentionBytes+100))
	writeFile(t, filepath.Join(root, "bin.dat"), "ab\x00cd")
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	body, _, notes := attachMentions(root, nil, "@big.txt @bin.dat @dir")
	if !strings.Contains(body, strings.Repeat("x", maxMentionBytes)) || strings.Contains(body, strings.Repeat("x", maxMentionBytes+1)) {
		t.Errorf("big.txt was not cut at %d bytes", maxMentionBytes)
	}
	if strings.Contains(body, "ab\x00cd") {
		t.Errorf("a binary file was attached")
	}
	want := []string{"the first 256.0 KiB of", "bin.dat not attached: it is a binary file", "dir not attached: it is a directory"}
	if len(notes) != len(want) {
		t.Fatalf("notes = %q", notes)
	}
	for i, w := range want {
		if !strings.Contains(notes[i], w) {
			t.Errorf("note %d = %q, want it to say %q", i, notes[i], w)
		}
	}
}

// TestLineModeAttachesMentions: line mode attaches @files too, those of a
// custom command's prompt included, and says so.
func TestLineModeAttachesMentions(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "notes.txt"), "NOTES-CONTENT")
	writeFile(t, filepath.Join(root, ".odin/commands/show.md"), "Show @notes.txt")
	f := newFake("s1", answerAt("answer to"))
	in := strings.NewReader("summarise @notes.txt\n/show\n")
	var out syncBuffer
	no := false
	if _, err := Run(t.Context(), Options{In: in, Out: &out, Session: f, Root: root, Interactive: &no,
		CommandDirs: []string{filepath.Join(root, ".odin/commands")}}); err != nil {
		t.Fatal(err)
	}
	sub, _, _, _ := f.snapshot()
	if len(sub) != 2 {
		t.Fatalf("%d inputs submitted, want 2", len(sub))
	}
	if !strings.Contains(sub[0].Body, "NOTES-CONTENT") {
		t.Errorf("the typed mention was not attached: %q", sub[0].Body)
	}
	if !strings.HasPrefix(sub[1].Body, "Show @notes.txt"+attachedFilesTag) || !strings.Contains(sub[1].Body, "NOTES-CONTENT") {
		t.Errorf("the custom command's mention was not attached: %q", sub[1].Body)
	}
	if !strings.Contains(out.String(), "attached @notes.txt") {
		t.Errorf("line mode did not say what it attached:\n%s", out.String())
	}
}

// TestAttachImageMentions: an image path becomes an image part, sniffed
// from its bytes; a text file named .png and an image outside the project
// are refused with a note, and no image leaves the project.
func TestAttachImageMentions(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "proj")
	img := image.NewRGBA(image.Rect(0, 0, 5, 3))
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "shots/s.png"), b.String())
	writeFile(t, filepath.Join(root, "fake.png"), "just text")
	writeFile(t, filepath.Join(dir, "outside.png"), b.String())
	body, images, notes := attachMentions(root, nil, "what is @shots/s.png and @fake.png and @../outside.png")
	if strings.Contains(body, "<attached_files>") {
		t.Errorf("images went into the text block:\n%s", body)
	}
	if len(images) != 1 {
		t.Fatalf("images = %d, want 1", len(images))
	}
	if im := images[0]; im.Name != "shots/s.png" || im.MIME != "image/png" || im.Width != 5 || im.Height != 3 || !bytes.Equal(im.Data, b.Bytes()) {
		t.Errorf("image = %s %s %dx%d", im.Name, im.MIME, im.Width, im.Height)
	}
	want := []string{"attached @shots/s.png as an image (image/png 5x3", "! @fake.png not attached", "! @../outside.png not attached: it is outside the project"}
	if len(notes) != len(want) {
		t.Fatalf("notes = %q", notes)
	}
	for i, w := range want {
		if !strings.Contains(notes[i], w) {
			t.Errorf("note %d = %q, want it to contain %q", i, notes[i], w)
		}
	}
}

// TestMentionDenyRead: @ mentions of files on the read deny list attach
// nothing of them, also through a link whose own name is innocent.
func TestMentionDenyRead(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ".env"), "TOKEN=CANARY-mention-env\n")
	writeFile(t, filepath.Join(root, "svc/.env.local"), "TOKEN=CANARY-mention-local\n")
	writeFile(t, filepath.Join(root, "keys/id"), "CANARY-mention-key\n")
	writeFile(t, filepath.Join(root, ".env.example"), "TOKEN=TEMPLATE\n")
	if err := os.Symlink(".env", filepath.Join(root, "settings.txt")); err != nil {
		t.Fatal(err)
	}
	rules, err := readdeny.New(readdeny.Options{Root: root, User: []string{"keys/"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := "look at @.env @svc/.env.local @settings.txt @keys/id and @.env.example"
	body, _, notes := attachMentions(root, rules.Check, msg)
	if strings.Contains(body, "CANARY") {
		t.Errorf("a denied file was attached:\n%s", body)
	}
	if !strings.Contains(body, "TOKEN=TEMPLATE") {
		t.Errorf(".env.example was not attached:\n%s", body)
	}
	denied := 0
	for _, n := range notes {
		if strings.Contains(n, "read deny list") {
			denied++
		}
	}
	if denied != 4 {
		t.Errorf("notes = %q, want 4 naming the read deny list", notes)
	}
	// Without the list the same message attaches them: the test can fail.
	if body, _, _ := attachMentions(root, nil, msg); !strings.Contains(body, "CANARY-mention-env") {
		t.Errorf("control: .env not attached without a deny list:\n%s", body)
	}
}

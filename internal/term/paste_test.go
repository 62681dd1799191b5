package term

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestUIPastedImagePath: pasting an image file's path (as a terminal does
// for a dragged file: quoted, escaped blanks, outside the project) puts
// a label in the input and sends the image with it; deleting the label
// drops the image; a path that is not an image is refused with a flash and
// pasted as text.
func TestUIPastedImagePath(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 6, 4))); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "Screen Shot.png")
	if err := os.WriteFile(shot, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fake.png"), []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFake("s", nil)
	tu := newTestUI(t, f, Options{Root: t.TempDir()})
	tu.typeText("what is ")
	tu.do(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(strings.ReplaceAll(shot, " ", `\ `)), Paste: true})
	if v := tu.m.ta.Value(); v != "what is [image #1: Screen Shot.png 6x4] " {
		t.Fatalf("input after paste = %q", v)
	}
	tu.typeText("?")
	tu.key(tea.KeyEnter)

	tu.do(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("'" + shot + "'"), Paste: true})
	tu.m.ta.SetValue("never mind") // the label is gone
	tu.key(tea.KeyEnter)

	tu.do(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(filepath.Join(dir, "fake.png")), Paste: true})
	tu.key(tea.KeyEnter)

	sub, _, _, _ := f.snapshot()
	if len(sub) != 3 {
		t.Fatalf("%d inputs", len(sub))
	}
	if len(sub[0].Images) != 1 || sub[0].Images[0].Name != "Screen Shot.png" || !bytes.Equal(sub[0].Images[0].Data, b.Bytes()) {
		t.Errorf("first input images = %+v", sub[0].Images)
	}
	if len(sub[1].Images) != 0 || len(sub[2].Images) != 0 {
		t.Errorf("images sent without their label: %d, %d", len(sub[1].Images), len(sub[2].Images))
	}
	if !strings.HasSuffix(sub[2].Body, "fake.png") {
		t.Errorf("a refused image path was not pasted as text: %q", sub[2].Body)
	}
}

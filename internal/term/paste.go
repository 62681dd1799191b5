package term

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
)

// pastedImage recognises a paste that is one image file's path, as a
// terminal pastes a file dragged onto it: possibly quoted, with
// backslash-escaped blanks, or a file:// URL; relative paths are under
// root. ok is false for any other text (pasted as is); err says why an
// image path could not be attached. The user pasted the path, so it may
// lie outside the project, unlike an @ mention typed by hand.
func pastedImage(root, text string) (im messages.Image, ok bool, err error) {
	p := strings.TrimSpace(text)
	if p == "" || strings.ContainsAny(p, "\n\t") {
		return im, false, nil
	}
	if len(p) >= 2 && (p[0] == '\'' || p[0] == '"') && p[len(p)-1] == p[0] {
		p = p[1 : len(p)-1]
	} else {
		p = strings.ReplaceAll(p, `\ `, " ")
	}
	if u, err := url.Parse(p); err == nil && u.Scheme == "file" {
		p = u.Path
	}
	if !llm.IsImagePath(p) || (!filepath.IsAbs(p) && strings.Contains(p, " ")) {
		return im, false, nil
	}
	if !filepath.IsAbs(p) {
		if root == "" {
			return im, false, nil
		}
		p = filepath.Join(root, p)
	}
	img, err := llm.ReadImage(p)
	if err != nil {
		return im, true, err
	}
	return messages.Image{Name: img.Name, MIME: img.MIME, Data: img.Data, Width: img.Width, Height: img.Height}, true, nil
}

// pastedLabel marks pasted image n in the input.
func pastedLabel(n int, im messages.Image) string {
	return fmt.Sprintf("[image #%d: %s %dx%d]", n, im.Name, im.Width, im.Height)
}

// takePasted returns the pasted images whose label is still in text and
// forgets them all: a submitted input starts the next one afresh.
func (m *ui) takePasted(text string) []messages.Image {
	var out []messages.Image
	for i, im := range m.pasted {
		if strings.Contains(text, pastedLabel(i+1, im)) {
			out = append(out, im)
		}
	}
	m.pasted = nil
	return out
}

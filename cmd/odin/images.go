package main

import (
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
)

// readImages reads the images of odin run --image, checked before the
// session starts: each must be a PNG, JPEG, GIF or WebP file within the
// size cap, and the main model must take images (the catalogue, or
// model_info.<id>.images). Every refusal is a usage error naming the file
// or the model.
func (a *app) readImages(paths []string) ([]messages.Image, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	m, err := a.model("main")
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if m.NoImages {
		return nil, usageError("--image: the model %s does not take images; use a model that does (--model), or set model_info.%s.images: true if it does", m.ID, m.ID)
	}
	out := make([]messages.Image, 0, len(paths))
	for _, p := range paths {
		im, err := llm.ReadImage(p)
		if err != nil {
			return nil, usageError("--image: %v", err)
		}
		out = append(out, messages.Image{Name: im.Name, MIME: im.MIME, Data: im.Data, Width: im.Width, Height: im.Height})
	}
	return out, nil
}

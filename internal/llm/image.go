package llm

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // registers the decoders image.DecodeConfig uses
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"

	_ "golang.org/x/image/webp"
)

// MaxImageBytes is the largest image Odin sends: providers refuse larger
// ones (OpenAI's limit is 20 MB per image, Anthropic's 5 MB), and the
// image travels base64-encoded in every later request of the session.
const MaxImageBytes = 5 << 20

// ErrImage is wrapped by every error of NewImage and ReadImage.
var ErrImage = errors.New("image")

// imageTypes are the formats every provider that takes images accepts.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// NewImage makes an image part from data, named name (shown to the user).
// The type is sniffed from the bytes, never taken from the name: anything
// but PNG, JPEG, GIF or WebP, data larger than MaxImageBytes, or bytes
// that do not decode as their type are refused with an error saying why.
func NewImage(name string, data []byte) (Image, error) {
	if len(data) == 0 {
		return Image{}, fmt.Errorf("%w %s: the file is empty", ErrImage, name)
	}
	if len(data) > MaxImageBytes {
		return Image{}, fmt.Errorf("%w %s: %d bytes is over the %d MB limit", ErrImage, name, len(data), MaxImageBytes>>20)
	}
	mime := http.DetectContentType(data)
	if !imageTypes[mime] {
		return Image{}, fmt.Errorf("%w %s: not a PNG, JPEG, GIF or WebP image (the content is %s)", ErrImage, name, mime)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("%w %s: not a valid %s: %v", ErrImage, name, mime, err)
	}
	return Image{Name: name, MIME: mime, Data: data, Width: cfg.Width, Height: cfg.Height}, nil
}

// ReadImage reads the image file at path, named by its base name. It reads
// at most one byte past MaxImageBytes, so a huge file is refused without
// being loaded.
func ReadImage(path string) (Image, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return Image{}, fmt.Errorf("%w %s: %w", ErrImage, path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxImageBytes+1))
	if err != nil {
		return Image{}, fmt.Errorf("%w %s: %w", ErrImage, path, err)
	}
	if len(data) > MaxImageBytes {
		return Image{}, fmt.Errorf("%w %s: the file is over the %d MB limit", ErrImage, path, MaxImageBytes>>20)
	}
	return NewImage(name, data)
}

// IsImagePath reports whether path names a file by an image extension;
// front ends use it to tell an image mention from a text one.
func IsImagePath(path string) bool {
	switch filepath.Ext(path) {
	case ".png", ".PNG", ".jpg", ".JPG", ".jpeg", ".JPEG", ".gif", ".GIF", ".webp", ".WEBP":
		return true
	}
	return false
}

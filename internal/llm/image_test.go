package llm_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// pngBytes is a w×h PNG.
func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestNewImage(t *testing.T) {
	data := pngBytes(t, 3, 2)
	im, err := llm.NewImage("shot.png", data)
	if err != nil {
		t.Fatal(err)
	}
	if im.MIME != "image/png" || im.Width != 3 || im.Height != 2 || !bytes.Equal(im.Data, data) {
		t.Errorf("image = %s %dx%d %d bytes", im.MIME, im.Width, im.Height, len(im.Data))
	}
	if got := im.Label(); got != "[image: shot.png 3x2]" {
		t.Errorf("label = %q", got)
	}
	// The type comes from the bytes: a text file named .png is refused,
	// as are a truncated PNG, an empty file and one over the cap.
	bad := map[string][]byte{
		"not an image": []byte("hello, world\n"),
		"truncated":    data[:20],
		"empty":        nil,
		"too large":    append(append([]byte{}, data...), make([]byte, llm.MaxImageBytes)...),
	}
	for name, b := range bad {
		if _, err := llm.NewImage("x.png", b); !errors.Is(err, llm.ErrImage) || !strings.Contains(err.Error(), "x.png") {
			t.Errorf("%s: err = %v, want an image error naming the file", name, err)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "big.png")
	if err := os.WriteFile(p, bad["too large"], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := llm.ReadImage(p); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("ReadImage of an oversized file: %v", err)
	}
	if _, err := llm.ReadImage(filepath.Join(dir, "missing.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadImage of a missing file: %v", err)
	}
}

// TestImagesOnTheWire: a user message's images become image_url parts
// with data URLs; a tool message's images follow the run of tool messages
// as one user message (tool messages carry text only); a text-only model
// gets their labels instead.
func TestImagesOnTheWire(t *testing.T) {
	im, err := llm.NewImage("shot.png", pngBytes(t, 4, 4))
	if err != nil {
		t.Fatal(err)
	}
	tim := im
	tim.Name = "mcp__e__img"
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: "what is this?", Images: []llm.Image{im}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "mcp__e__img", Arguments: "{}"}, {ID: "c2", Name: "Now", Arguments: "{}"}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "an image follows", Images: []llm.Image{tim}},
		{Role: llm.RoleTool, ToolCallID: "c2", Content: "noon"},
	}
	for _, textOnly := range []bool{false, true} {
		srv := llmtest.NewServer(t, llmtest.NewScript().Add("code", llmtest.Reply("ok")))
		c, _ := newAdapter(t, srv.URL())
		if _, err := c.Stream(t.Context(), llm.Request{Model: "m", Agent: "code", Messages: msgs, TextOnly: textOnly}, nil); err != nil {
			t.Fatal(err)
		}
		body := srv.RequestsFor("code")[0].Body
		bare := im
		bare.Name, bare.Width, bare.Height = "", 0, 0
		want := []llm.Message{
			{Role: llm.RoleUser, Content: "what is this?", Images: []llm.Image{bare}},
			{Role: llm.RoleAssistant, ToolCalls: msgs[1].ToolCalls},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "an image follows"},
			{Role: llm.RoleTool, ToolCallID: "c2", Content: "noon"},
			{Role: llm.RoleUser, Content: "The images returned by the tool calls above:[image: mcp__e__img 4x4]", Images: []llm.Image{bare}},
		}
		if textOnly {
			want = []llm.Message{
				{Role: llm.RoleUser, Content: "what is this?\n[image: shot.png 4x4] (not shown: this model does not take images)"},
				{Role: llm.RoleAssistant, ToolCalls: msgs[1].ToolCalls},
				{Role: llm.RoleTool, ToolCallID: "c1", Content: "an image follows\n[image: mcp__e__img 4x4] (not shown: this model does not take images)"},
				{Role: llm.RoleTool, ToolCallID: "c2", Content: "noon"},
			}
		}
		if diff := cmp.Diff(want, body.LLMMessages()); diff != "" {
			t.Errorf("textOnly=%v: messages (-want +got):\n%s", textOnly, diff)
		}
		if !textOnly {
			if u := body.Messages[0].ImageURLs(); len(u) != 1 || !strings.HasPrefix(u[0], "data:image/png;base64,") {
				t.Errorf("image URL = %v, want a PNG data URL", u)
			}
		}
	}
}

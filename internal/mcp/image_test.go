package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func tinyPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestImageResultsBecomeImageParts: image content and image resource blobs
// reach the model as images (named after the tool or the resource), each
// announced in the text; bytes that are no image stay a line of text.
func TestImageResultsBecomeImageParts(t *testing.T) {
	f := newFixture(t)
	pic := tinyPNG(t, 2, 3)
	sdk.AddTool(f.srv, &sdk.Tool{Name: "shot", Description: "Screenshot."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here it is"},
				&sdk.ImageContent{MIMEType: "image/png", Data: pic},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("not a png")},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///s.png", MIMEType: "image/png", Blob: pic}},
			}}, nil, nil
		})
	m := newManager(t, f, Options{})
	m.Start()
	m.WaitReady(t.Context(), 10*time.Second)
	res, err := find(t, m.Tools(), "mcp__fx__shot").Run(t.Context(), nil, json.RawMessage(`{}`))
	if err != nil || res.IsError {
		t.Fatalf("shot = %+v, %v", res, err)
	}
	if len(res.Images) != 2 {
		t.Fatalf("images = %d, want 2 (the bad one is text)", len(res.Images))
	}
	for i, want := range []string{"mcp__fx__shot image 1", "file:///s.png"} {
		im := res.Images[i]
		if im.Name != want || im.MIME != "image/png" || im.Width != 2 || im.Height != 3 || !bytes.Equal(im.Data, pic) {
			t.Errorf("image %d = %s %s %dx%d", i, im.Name, im.MIME, im.Width, im.Height)
		}
	}
	for _, w := range []string{"here it is", "[image: mcp__fx__shot image 1 2x3] (the picture follows", "[not shown: image mcp__fx__shot image 2: not a PNG", "[image: file:///s.png 2x3]"} {
		if !strings.Contains(res.Output, w) {
			t.Errorf("output lacks %q:\n%s", w, res.Output)
		}
	}
}

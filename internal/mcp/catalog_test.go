package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResourcesAndPrompts: a ready server's resources and prompts are
// listed without a call; reading a resource gives its text (or image);
// a prompt takes its arguments in order, the last taking the rest, and a
// missing required one is an error naming it.
func TestResourcesAndPrompts(t *testing.T) {
	f := newFixture(t)
	pic := tinyPNG(t, 1, 1)
	f.srv.AddResource(&sdk.Resource{URI: "file:///notes.txt", Name: "notes", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "the code is tulip"}}}, nil
		})
	f.srv.AddResource(&sdk.Resource{URI: "file:///logo.png", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: pic}}}, nil
		})
	f.srv.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review a file.", Arguments: []*sdk.PromptArgument{{Name: "file", Required: true}, {Name: "focus"}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			a := req.Params.Arguments
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Review " + a["file"] + " for " + a["focus"]}}}}, nil
		})
	m := newManager(t, f, Options{})
	m.Start()
	m.WaitReady(t.Context(), 10*time.Second)
	for len(m.Prompts()) == 0 || len(m.Resources()) < 2 { // listed in the background
		time.Sleep(time.Millisecond)
	}
	want := []Resource{{Server: "fx", URI: "file:///logo.png", Name: "logo", MIME: "image/png"}, {Server: "fx", URI: "file:///notes.txt", Name: "notes", MIME: "text/plain"}}
	if diff := cmp.Diff(want, m.Resources()); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	p := m.Prompts()[0]
	if p.CommandName() != "mcp__fx__review" || len(p.Args) != 2 || !p.Args[0].Required {
		t.Errorf("prompt = %+v", p)
	}
	text, images, err := m.ReadResource(t.Context(), "fx", "file:///notes.txt")
	if err != nil || !strings.Contains(text, "the code is tulip") || len(images) != 0 {
		t.Errorf("notes = %q %d %v", text, len(images), err)
	}
	_, images, err = m.ReadResource(t.Context(), "fx", "file:///logo.png")
	if err != nil || len(images) != 1 || images[0].MIME != "image/png" {
		t.Errorf("logo = %d images, %v", len(images), err)
	}
	if _, _, err := m.ReadResource(t.Context(), "fx", "file:///missing"); err == nil {
		t.Error("reading a missing resource succeeded")
	}
	if _, _, err := m.ReadResource(t.Context(), "nope", "x"); err == nil || !strings.Contains(err.Error(), `no MCP server "nope"`) {
		t.Errorf("unknown server: %v", err)
	}
	got, err := m.GetPrompt(t.Context(), "fx", "review", []string{"a.go", "error", "handling"})
	if err != nil || got != "Review a.go for error handling" {
		t.Errorf("prompt = %q, %v", got, err)
	}
	if _, err := m.GetPrompt(t.Context(), "fx", "review", nil); err == nil || !strings.Contains(err.Error(), "needs the argument file") {
		t.Errorf("missing argument: %v", err)
	}
}

package acp

import (
	"bytes"
	"encoding/base64"
	"image"
	pngenc "image/png"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/messages"
)

func TestPromptTextFencesEmbeddedFilesAndAttachesImages(t *testing.T) {
	got, images, err := promptText([]sdk.ContentBlock{
		sdk.TextBlock("explain"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///p/a.go", Text: "package a"}}),
	})
	if err != nil || len(images) != 0 || !strings.Contains(got, "explain") || !strings.Contains(got, "<file uri=\"file:///p/a.go\">\npackage a\n</file>") {
		t.Errorf("promptText = %q, %v, %v", got, images, err)
	}
	var png bytes.Buffer
	if err := pngenc.Encode(&png, image.NewRGBA(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	uri := "file:///p/shot.png"
	block := sdk.ImageBlock(base64.StdEncoding.EncodeToString(png.Bytes()), "image/png")
	block.Image.Uri = &uri
	got, images, err = promptText([]sdk.ContentBlock{sdk.TextBlock("what is this?"), block})
	if err != nil || got != "what is this?" || len(images) != 1 {
		t.Fatalf("promptText with an image = %q, %v, %v", got, images, err)
	}
	if im := images[0]; im.Name != "shot.png" || im.MIME != "image/png" || im.Width != 3 || im.Height != 2 || !bytes.Equal(im.Data, png.Bytes()) {
		t.Errorf("image = %+v", im)
	}
	// Bytes that are not an image, or not base64, are refused: the model
	// never gets them.
	if _, _, err := promptText([]sdk.ContentBlock{sdk.ImageBlock("AAAA", "image/png")}); err == nil {
		t.Error("four zero bytes were accepted as a PNG")
	}
	if _, _, err := promptText([]sdk.ContentBlock{sdk.ImageBlock("not base64!", "image/png")}); err == nil {
		t.Error("data that is not base64 was accepted")
	}
	if _, _, err := promptText([]sdk.ContentBlock{sdk.TextBlock("  ")}); err == nil {
		t.Error("an empty prompt was accepted")
	}
}

func TestTodosBecomeAPlan(t *testing.T) {
	ls := newLiveSession(nil, nil, messages.ModeEdit, nil)
	us := ls.updates(messages.TodosUpdated{Todos: []messages.Todo{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}, {Content: "c", Status: "pending"}}})
	if len(us) != 1 || us[0].Plan == nil || len(us[0].Plan.Entries) != 3 {
		t.Fatalf("updates = %+v", us)
	}
	e := us[0].Plan.Entries
	if e[0].Status != sdk.PlanEntryStatusCompleted || e[1].Status != sdk.PlanEntryStatusInProgress || e[2].Status != sdk.PlanEntryStatusPending {
		t.Errorf("plan = %+v", e)
	}
}

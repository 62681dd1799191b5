package acp

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	pngenc "image/png"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
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

func TestAnnouncerHoldsACallsRequestsUntilItsToolCall(t *testing.T) {
	a := newAnnouncer()
	ctx := tool.WithCall(t.Context(), tool.CallRef{Origin: messages.Origin{Agent: "orchestrator"}, ID: "call_1"})
	done := make(chan error, 1)
	go func() { done <- a.waitFor(ctx) }()
	a.markShown("call_2") // another call's announcement does not release it
	select {
	case err := <-done:
		t.Fatalf("waitFor returned (%v) before call_1 was announced", err)
	case <-time.After(50 * time.Millisecond):
	}
	a.markShown("call_1")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// No call in the context: nothing to wait for.
	if err := a.waitFor(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A resync (the announcement may have been dropped) releases a waiter.
	ctx = tool.WithCall(t.Context(), tool.CallRef{ID: "call_3"})
	go func() { done <- a.waitFor(ctx) }()
	// Resync until it lands while the waiter waits (one before it
	// started waiting does not count).
	for released := false; !released; {
		a.resync()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			released = true
		case <-time.After(10 * time.Millisecond):
		}
	}
	// A cancelled tool stops waiting with its context's error.
	cctx, cancel := context.WithCancel(tool.WithCall(t.Context(), tool.CallRef{ID: "call_4"}))
	cancel()
	if err := a.waitFor(cctx); err == nil {
		t.Error("waitFor on a cancelled context returned nil")
	}
}

func TestSlashCommands(t *testing.T) {
	ls := newLiveSession(nil, nil, messages.ModeEdit, nil)
	ls.cmds = []Command{{Name: "review", Expand: func(args string) (string, messages.Mode) { return "Review " + args, "" }}}
	for _, tc := range []struct {
		in, name, args string
		ok             bool
	}{
		{"/review main.go util.go", "review", "main.go util.go", true},
		{"/review\nmain.go", "review", "main.go", true},
		{"  /compact", "compact", "", true},
		{"/usr/bin is where?", "", "", false},
		{"review main.go", "", "", false},
		{"/reviewer x", "", "", false},
	} {
		c, args, ok := ls.slashCommand(tc.in)
		if ok != tc.ok || c.Name != tc.name || args != tc.args {
			t.Errorf("slashCommand(%q) = %q, %q, %v; want %q, %q, %v", tc.in, c.Name, args, ok, tc.name, tc.args, tc.ok)
		}
	}
	names := []string{}
	for _, c := range ls.commands() {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "compact review" {
		t.Errorf("commands = %v", names)
	}
}

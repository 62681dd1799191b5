package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/messages"
)

func TestPromptTextFencesEmbeddedFilesAndRefusesImages(t *testing.T) {
	got, err := promptText([]sdk.ContentBlock{
		sdk.TextBlock("explain"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///p/a.go", Text: "package a"}}),
	})
	if err != nil || !strings.Contains(got, "explain") || !strings.Contains(got, "<file uri=\"file:///p/a.go\">\npackage a\n</file>") {
		t.Errorf("promptText = %q, %v", got, err)
	}
	if _, err := promptText([]sdk.ContentBlock{sdk.ImageBlock("AAAA", "image/png")}); err == nil {
		t.Error("an image was accepted though promptCapabilities.image is false")
	}
	if _, err := promptText([]sdk.ContentBlock{sdk.TextBlock("  ")}); err == nil {
		t.Error("an empty prompt was accepted")
	}
}

func TestTodosBecomeAPlan(t *testing.T) {
	ls := &liveSession{before: map[string]fileBefore{}}
	us := ls.updates(messages.TodosUpdated{Todos: []messages.Todo{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}, {Content: "c", Status: "pending"}}})
	if len(us) != 1 || us[0].Plan == nil || len(us[0].Plan.Entries) != 3 {
		t.Fatalf("updates = %+v", us)
	}
	e := us[0].Plan.Entries
	if e[0].Status != sdk.PlanEntryStatusCompleted || e[1].Status != sdk.PlanEntryStatusInProgress || e[2].Status != sdk.PlanEntryStatusPending {
		t.Errorf("plan = %+v", e)
	}
}

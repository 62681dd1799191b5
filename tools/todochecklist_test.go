package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
)

// A specialist's TodoWrite is offered without the plan-only fields, and a
// call through it is the session's TodoWrite: same validation, same list.
func TestAsChecklist(t *testing.T) {
	full := WithRecover(NewTodoWrite())
	lean := AsChecklist(full)
	if got := AsChecklist(NewThink()).Info().Name; got != NameThink {
		t.Fatalf("AsChecklist changed another tool: %s", got)
	}
	info := lean.Info()
	if info.Name != NameTodoWrite || info.Class != full.Info().Class {
		t.Errorf("name, class = %s, %s; want TodoWrite, %s", info.Name, info.Class, full.Info().Class)
	}
	var schema struct {
		Properties map[string]struct {
			Items struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(info.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	var props []string
	for p := range schema.Properties["todos"].Items.Properties {
		props = append(props, p)
	}
	slices.Sort(props)
	if d := cmp.Diff([]string{"content", "id", "status"}, props); d != "" {
		t.Errorf("item properties (-want +got):\n%s", d)
	}
	if strings.Contains(info.Description, "acceptance") || len(info.Schema) >= len(full.Info().Schema) || len(info.Description) >= len(full.Info().Description) {
		t.Errorf("the checklist definition is not the lean one:\n%s\n%s", info.Description, info.Schema)
	}

	res, err := lean.Run(t.Context(), nil, json.RawMessage(`{"todos":[{"id":"1","content":"Read the code","status":"in_progress"}]}`))
	if err != nil || res.IsError {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if d := cmp.Diff([]messages.Todo{{ID: "1", Content: "Read the code", Status: "in_progress"}}, res.Meta); d != "" {
		t.Errorf("Meta (-want +got):\n%s", d)
	}
	// TodoWrite's own checks still apply.
	res, err = lean.Run(t.Context(), nil, json.RawMessage(`{"todos":[{"id":"1","content":"a","status":"done"}]}`))
	if err != nil || !res.IsError {
		t.Errorf("a bad status was accepted: %+v, %v", res, err)
	}
}

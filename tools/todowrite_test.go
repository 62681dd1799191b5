package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

func TestTodoWrite(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantMeta []messages.Todo
		want     string // exact output, or an error substring
		isError  bool
	}{
		{
			name:  "list rendered and returned",
			input: `{"todos":[{"id":"1","content":"Write tests","status":"completed"},{"id":"2","content":"Fix bug","status":"in_progress"},{"id":"3","content":"Update docs","status":"pending"}]}`,
			wantMeta: []messages.Todo{
				{ID: "1", Content: "Write tests", Status: "completed"},
				{ID: "2", Content: "Fix bug", Status: "in_progress"},
				{ID: "3", Content: "Update docs", Status: "pending"},
			},
			want: "Todo list updated: 3 items (1 completed, 1 in progress, 1 pending).\nIn progress: Fix bug (id 2)",
		},
		{
			name:     "empty list clears",
			input:    `{"todos":[]}`,
			wantMeta: []messages.Todo{},
			want:     "Todo list cleared (0 items).",
		},
		{
			name:  "several in progress is advised against, not refused",
			input: `{"todos":[{"id":"a","content":"A","status":"in_progress"},{"id":"b","content":"B","status":"in_progress"}]}`,
			wantMeta: []messages.Todo{
				{ID: "a", Content: "A", Status: "in_progress"},
				{ID: "b", Content: "B", Status: "in_progress"},
			},
			want: "Todo list updated: 2 items (0 completed, 2 in progress, 0 pending).\n" +
				"In progress: A (id a)\nIn progress: B (id b)\n" +
				"Note: 2 items are in_progress; keep only the one you are working on in_progress and finish it before starting the next.",
		},
		{name: "duplicate ids", input: `{"todos":[{"id":"1","content":"A","status":"pending"},{"id":"1","content":"B","status":"pending"}]}`,
			want: `duplicate todo id "1" (todos[0] and todos[1])`, isError: true},
		{name: "unknown status", input: `{"todos":[{"id":"1","content":"A","status":"done"}]}`,
			want: "status", isError: true},
		{name: "empty content", input: `{"todos":[{"id":"1","content":"","status":"pending"}]}`,
			want: "content", isError: true},
		{name: "blank content", input: `{"todos":[{"id":"1","content":"   ","status":"pending"}]}`,
			want: "blank content", isError: true},
		{name: "missing id", input: `{"todos":[{"content":"A","status":"pending"}]}`,
			want: "id", isError: true},
		{name: "todos missing", input: `{}`, want: "todos", isError: true},
		{name: "todos null", input: `{"todos":null}`, want: "todos", isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := NewTodoWrite().Run(t.Context(), nil, json.RawMessage(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isError {
				t.Fatalf("IsError = %v, output %q", res.IsError, res.Output)
			}
			if tt.isError {
				if !strings.Contains(res.Output, tt.want) || res.Meta != nil {
					t.Errorf("result = %+v, want an error with %q and no Meta", res, tt.want)
				}
				return
			}
			if d := cmp.Diff(tt.want, res.Output); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
			meta, ok := res.Meta.([]messages.Todo)
			if !ok {
				t.Fatalf("Meta is %T, want []messages.Todo", res.Meta)
			}
			if d := cmp.Diff(tt.wantMeta, meta); d != "" {
				t.Errorf("Meta (-want +got):\n%s", d)
			}
		})
	}
}

func TestTodoWriteDependencies(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"unknown id", `{"todos":[{"id":"a","content":"A","status":"pending","blocked_by":["zz"]}]}`,
			`todos[0] (id "a") is blocked_by "zz", which is not an id in the list`},
		{"itself", `{"todos":[{"id":"a","content":"A","status":"pending","blocked_by":["a"]}]}`,
			`todos[0] (id "a") is blocked by itself`},
		{"cycle", `{"todos":[{"id":"a","content":"A","status":"pending","blocked_by":["c"]},{"id":"b","content":"B","status":"pending","blocked_by":["a"]},{"id":"c","content":"C","status":"pending","blocked_by":["b"]}]}`,
			`blocked_by forms a cycle (a -> c -> b -> a)`},
		{"bad priority", `{"todos":[{"id":"a","content":"A","status":"pending","priority":"urgent"}]}`, `priority`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := NewTodoWrite().Run(context.Background(), &tool.Env{}, json.RawMessage(tc.in))
			if err != nil || !res.IsError || !strings.Contains(res.Output, tc.want) || res.Meta != nil {
				t.Fatalf("TodoWrite = %+v, %v; want a tool error containing %q", res, err, tc.want)
			}
		})
	}
	res, err := NewTodoWrite().Run(context.Background(), &tool.Env{}, json.RawMessage(
		`{"todos":[{"id":"a","content":"design","status":"completed","priority":"high"},{"id":"b","content":"build","status":"in_progress","blocked_by":["a"]},{"id":"c","content":"ship","status":"pending","priority":"low","blocked_by":["a","b"]}]}`))
	if err != nil || res.IsError {
		t.Fatalf("TodoWrite = %+v, %v", res, err)
	}
	got := res.Meta.([]messages.Todo)
	if got[2].Priority != "low" || len(got[2].BlockedBy) != 2 || got[1].BlockedBy[0] != "a" {
		t.Errorf("todos = %+v", got)
	}
	// The result names what is under way and what still waits, with the
	// blockers not yet completed; the completed item is only counted.
	for _, want := range []string{"(1 completed, 1 in progress, 1 pending)", "In progress: build (id b)", "Waiting: ship (id c, low priority, blocked by b)"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if strings.Contains(res.Output, "design") {
		t.Errorf("the completed item is echoed:\n%s", res.Output)
	}
}

package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/messages"
)

//go:embed todowrite.md
var todoWriteDescription string

// Todo statuses, as the seed schema names them.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// TodoWriteInput is TodoWrite's input: the whole updated list.
type TodoWriteInput struct {
	Todos []TodoItem `json:"todos" jsonschema:"The updated todo list"`
}

// TodoItem is one entry of TodoWriteInput.
type TodoItem struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
	// Acceptance criteria are checked by QA when the change is gated.
	Acceptance []messages.AcceptanceCriterion `json:"acceptance,omitempty" jsonschema:"acceptance criteria: what must hold when this item is done; QA checks each (by its command when given)"`
}

// NewTodoWrite returns TodoWrite. It does not store the list: the result's
// Meta is the new []messages.Todo, which the calling actor keeps in the
// session and publishes as messages.TodosUpdated. It changes nothing in the
// workspace, hence ClassRead (ask and plan modes may keep a list too).
func NewTodoWrite() Tool {
	return New[TodoWriteInput](NameTodoWrite, ClassRead, todoWriteDescription, todoWrite,
		WithSchema(func(s *jsonschema.Schema) {
			setArray(s, "todos", 0)
			item := s.Properties["todos"].Items
			min := 1
			item.Properties["content"].MinLength = &min
			item.Properties["status"].Enum = []any{TodoPending, TodoInProgress, TodoCompleted}
		}))
}

func todoWrite(_ context.Context, _ *Env, in TodoWriteInput) (Result, error) {
	seen := make(map[string]int, len(in.Todos))
	todos := make([]messages.Todo, 0, len(in.Todos))
	counts := map[string]int{}
	for i, t := range in.Todos {
		if prev, dup := seen[t.ID]; dup {
			return Errorf("duplicate todo id %q (todos[%d] and todos[%d]); every todo needs its own id. The list was not changed.", t.ID, prev, i), nil
		}
		seen[t.ID] = i
		if strings.TrimSpace(t.Content) == "" {
			return Errorf("todos[%d] (id %q) has blank content; describe the task. The list was not changed.", i, t.ID), nil
		}
		counts[t.Status]++
		todos = append(todos, messages.Todo{ID: t.ID, Content: t.Content, Status: t.Status, Acceptance: acceptance(t.Acceptance)})
	}
	return Result{Output: renderTodos(todos, counts), Meta: todos}, nil
}

// renderTodos shows the list back to the model so it can check what it
// recorded.
func renderTodos(todos []messages.Todo, counts map[string]int) string {
	if len(todos) == 0 {
		return "Todo list cleared (0 items)."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Todo list updated: %d item%s (%d completed, %d in progress, %d pending).\n",
		len(todos), plural(len(todos)), counts[TodoCompleted], counts[TodoInProgress], counts[TodoPending])
	for _, t := range todos {
		mark := "[ ]"
		switch t.Status {
		case TodoCompleted:
			mark = "[x]"
		case TodoInProgress:
			mark = "[~]"
		}
		fmt.Fprintf(&b, "%s %s (id %s)\n", mark, t.Content, t.ID)
	}
	if n := counts[TodoInProgress]; n > 1 {
		fmt.Fprintf(&b, "Note: %d items are in_progress; keep only the one you are working on in_progress and finish it before starting the next.\n", n)
	}
	return strings.TrimRight(b.String(), "\n")
}

// acceptance keeps the criteria that say something.
func acceptance(in []messages.AcceptanceCriterion) []messages.AcceptanceCriterion {
	var out []messages.AcceptanceCriterion
	for _, a := range in {
		a.Criterion, a.Command = strings.TrimSpace(a.Criterion), strings.TrimSpace(a.Command)
		if a.Criterion != "" || a.Command != "" {
			if a.Criterion == "" {
				a.Criterion = "`" + a.Command + "` passes"
			}
			out = append(out, a)
		}
	}
	return out
}

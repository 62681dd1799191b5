package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
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
	Todos []TodoItem `json:"todos"`
}

// TodoItem is one entry of TodoWriteInput.
type TodoItem struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
	// Priority and BlockedBy are seed 004's TaskCreate/TaskUpdate fields.
	Priority  string   `json:"priority,omitempty" jsonschema:"Default medium"`
	BlockedBy []string `json:"blocked_by,omitempty" jsonschema:"ids to finish first"`
	// Acceptance criteria are checked by QA when the change is gated.
	Acceptance []messages.AcceptanceCriterion `json:"acceptance,omitempty"`
}

// Todo priorities.
const (
	PriorityHigh   = "high"
	PriorityMedium = "medium"
	PriorityLow    = "low"
)

// NewTodoWrite returns TodoWrite. It does not store the list: the result's
// Meta is the new []messages.Todo, which the calling actor keeps in the
// session and publishes as messages.TodosUpdated. It changes nothing in the
// workspace, hence ClassRead (ask and plan modes may keep a list too).
func NewTodoWrite() tool.Tool {
	return newBuiltin[TodoWriteInput](NameTodoWrite, tool.ClassRead, todoWriteDescription, todoWrite,
		tool.WithSchema(func(s *jsonschema.Schema) {
			item := todoItems(s)
			item.Properties["priority"].Enum = []any{PriorityHigh, PriorityMedium, PriorityLow}
			setArray(item, "blocked_by", 0)
		}))
}

func todoWrite(_ context.Context, _ *tool.Env, in TodoWriteInput) (tool.Result, error) {
	seen := make(map[string]int, len(in.Todos))
	todos := make([]messages.Todo, 0, len(in.Todos))
	counts := map[string]int{}
	for i, t := range in.Todos {
		if prev, dup := seen[t.ID]; dup {
			return tool.Errorf("duplicate todo id %q (todos[%d] and todos[%d]); every todo needs its own id. The list was not changed.", t.ID, prev, i), nil
		}
		seen[t.ID] = i
		if strings.TrimSpace(t.Content) == "" {
			return tool.Errorf("todos[%d] (id %q) has blank content; describe the task. The list was not changed.", i, t.ID), nil
		}
		counts[t.Status]++
		todos = append(todos, messages.Todo{ID: t.ID, Content: t.Content, Status: t.Status, Priority: t.Priority,
			BlockedBy: append([]string(nil), t.BlockedBy...), Acceptance: acceptance(t.Acceptance)})
	}
	if msg := checkDependencies(todos, seen); msg != "" {
		return tool.Errorf("%s The list was not changed.", msg), nil
	}
	return tool.Result{Output: renderTodos(todos, counts), Meta: todos}, nil
}

// checkDependencies rejects a blocked_by naming no item of the list, an
// item blocking itself, and a cycle (a list that could never be
// finished); it returns "" when the dependencies are sound.
func checkDependencies(todos []messages.Todo, index map[string]int) string {
	for i, t := range todos {
		for _, b := range t.BlockedBy {
			if _, ok := index[b]; !ok {
				return fmt.Sprintf("todos[%d] (id %q) is blocked_by %q, which is not an id in the list.", i, t.ID, b)
			}
			if b == t.ID {
				return fmt.Sprintf("todos[%d] (id %q) is blocked by itself.", i, t.ID)
			}
		}
	}
	// Depth-first search; state 1 is on the current path, 2 is done.
	state := make([]int, len(todos))
	var path []string
	var visit func(i int) string
	visit = func(i int) string {
		state[i] = 1
		path = append(path, todos[i].ID)
		for _, b := range todos[i].BlockedBy {
			j := index[b]
			switch state[j] {
			case 1:
				start := 0
				for k, id := range path {
					if id == b {
						start = k
					}
				}
				cycle := append(append([]string(nil), path[start:]...), b)
				return fmt.Sprintf("blocked_by forms a cycle (%s): none of these items could ever start.", strings.Join(cycle, " -> "))
			case 0:
				if msg := visit(j); msg != "" {
					return msg
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = 2
		return ""
	}
	for i := range todos {
		if state[i] == 0 {
			if msg := visit(i); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// renderTodos tells the model what it recorded: the counts, the item in
// progress and what is still blocked, and notes on what looks wrong. The
// items themselves are in the call it just made; echoing every one of
// them (a TodoWrite result stays in the history, and the next call makes
// it stale) cost their text again on every later request (issue 37).
func renderTodos(todos []messages.Todo, counts map[string]int) string {
	if len(todos) == 0 {
		return "Todo list cleared (0 items)."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Todo list updated: %d item%s (%d completed, %d in progress, %d pending).\n",
		len(todos), plural(len(todos)), counts[TodoCompleted], counts[TodoInProgress], counts[TodoPending])
	for _, t := range todos {
		open := openBlockers(todos, t)
		if t.Status != TodoInProgress && (t.Status == TodoCompleted || len(open) == 0) {
			continue
		}
		if t.Status == TodoInProgress {
			fmt.Fprintf(&b, "In progress: %s (id %s", t.Content, t.ID)
		} else {
			fmt.Fprintf(&b, "Waiting: %s (id %s", t.Content, t.ID)
		}
		if t.Priority != "" && t.Priority != PriorityMedium {
			fmt.Fprintf(&b, ", %s priority", t.Priority)
		}
		if len(open) > 0 {
			fmt.Fprintf(&b, ", blocked by %s", strings.Join(open, ", "))
		}
		b.WriteString(")\n")
	}
	for _, t := range todos {
		if t.Status != TodoPending && len(openBlockers(todos, t)) > 0 {
			fmt.Fprintf(&b, "Note: %q is %s while items it is blocked by are not completed.\n", t.ID, t.Status)
		}
	}
	if n := counts[TodoInProgress]; n > 1 {
		fmt.Fprintf(&b, "Note: %d items are in_progress; keep only the one you are working on in_progress and finish it before starting the next.\n", n)
	}
	return strings.TrimRight(b.String(), "\n")
}

// openBlockers are the items blocking t that are not completed yet.
func openBlockers(todos []messages.Todo, t messages.Todo) []string {
	var open []string
	for _, b := range t.BlockedBy {
		for _, o := range todos {
			if o.ID == b && o.Status != TodoCompleted {
				open = append(open, b)
			}
		}
	}
	return open
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

// todoItems constrains a todo list's schema as both TodoWrite forms share
// it (a non-empty content, the three statuses) and returns the item schema.
func todoItems(s *jsonschema.Schema) *jsonschema.Schema {
	setArray(s, "todos", 0)
	item := s.Properties["todos"].Items
	min := 1
	item.Properties["content"].MinLength = &min
	item.Properties["status"].Enum = []any{TodoPending, TodoInProgress, TodoCompleted}
	return item
}

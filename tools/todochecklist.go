package tools

import (
	"context"
	_ "embed"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/tools/tool"
)

//go:embed todochecklist.md
var checklistDescription string

// ChecklistInput is TodoWrite's input as a specialist is offered it: a
// subset of TodoWriteInput, so TodoWrite's own validation accepts it.
type ChecklistInput struct {
	Todos []ChecklistItem `json:"todos"`
}

// ChecklistItem is one entry of ChecklistInput.
type ChecklistItem struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
}

// checklistInfo is the specialist's TodoWrite definition, derived once.
var checklistInfo = sync.OnceValue(func() tool.Info {
	return tool.New[ChecklistInput](NameTodoWrite, tool.ClassRead, checklistDescription,
		func(context.Context, *tool.Env, ChecklistInput) (tool.Result, error) { return tool.Result{}, nil },
		tool.WithSchema(func(s *jsonschema.Schema) { todoItems(s) })).Info()
})

// checklist is TodoWrite offered with the checklist definition; calls run
// the session's TodoWrite (and whatever wraps it) unchanged.
type checklist struct{ tool.Tool }

func (c checklist) Info() tool.Info {
	info := checklistInfo()
	info.Class = c.Tool.Info().Class
	return info
}

// AsChecklist is the decorator that gives a specialist TodoWrite as a
// checklist of its one delegated task: the front ends show the list under
// the agent, and nothing reads the fields only the Orchestrator's plan
// uses (acceptance criteria, which QA checks against the session's list
// alone; priorities; dependencies), so a specialist is not offered them.
// Their definitions rode on every request of every specialist that keeps
// a list (issue 37). Other tools pass through.
func AsChecklist(t tool.Tool) tool.Tool {
	if t.Info().Name != NameTodoWrite {
		return t
	}
	return checklist{t}
}

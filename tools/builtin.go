package tools

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// Names of the built-in tools, as the seed spells them. Policies, rosters
// and hooks refer to tools by these names.
const (
	NameLS                = "LS"
	NameGlob              = "Glob"
	NameGrep              = "Grep"
	NameTree              = "Tree"
	NameReadFile          = "ReadFile"
	NameWriteFile         = "WriteFile"
	NameEditTool          = "EditTool"
	NameMultiEditTool     = "MultiEditTool"
	NameTodoWrite         = "TodoWrite"
	NameExecuteCommand    = "ExecuteCommand"
	NameGitDiff           = "GitDiff"
	NameContextSummarizer = "ContextSummarizer"
)

// setMinimum sets the minimum of the numeric property prop.
func setMinimum(s *jsonschema.Schema, prop string, min float64) {
	s.Properties[prop].Minimum = &min
}

// setDefault documents the default of prop for the model.
func setDefault(s *jsonschema.Schema, prop string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		panic("tools: default for " + prop + ": " + err.Error())
	}
	s.Properties[prop].Default = raw
}

// setArray makes prop a plain array (the derived schema also allows null,
// which models should not send) with at least minItems items.
func setArray(s *jsonschema.Schema, prop string, minItems int) {
	p := s.Properties[prop]
	p.Type, p.Types = "array", nil
	if minItems > 0 {
		p.MinItems = &minItems
	}
}

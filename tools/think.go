package tools

import (
	"context"
	_ "embed"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

//go:embed think.md
var thinkDescription string

// NameThink is the think tool's name.
const NameThink = "Think"

// ThinkInput is Think's input: the thought.
type ThinkInput struct {
	Thought string `json:"thought" jsonschema:"What you know, what is unclear, what you will do next and why"`
}

// NewThink returns Think (seed 003's think tool): a place for the model to
// reason between tool calls. It has no side effect; the thought is kept
// where every tool call is, in the session's transcript, and the model
// sees it in its own history.
func NewThink() Tool {
	return newBuiltin[ThinkInput](NameThink, ClassRead, thinkDescription, think,
		WithSchema(func(s *jsonschema.Schema) {
			min := 1
			s.Properties["thought"].MinLength = &min
		}))
}

func think(_ context.Context, _ *Env, in ThinkInput) (Result, error) {
	if strings.TrimSpace(in.Thought) == "" {
		return Errorf("thought is blank; write the reasoning, or carry on without the tool"), nil
	}
	return Result{Output: "Thought recorded."}, nil
}

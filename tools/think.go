package tools

import (
	"context"
	_ "embed"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed think.md
var thinkDescription string

// NameThink is the think tool's name.
const NameThink = "Think"

// ThinkInput is Think's input: the thought.
type ThinkInput struct {
	Thought string `json:"thought" jsonschema:"What you know, what is unclear, what next and why"`
}

// NewThink returns Think (seed 003's think tool): a place for the model to
// reason between tool calls. It has no side effect; the thought is kept
// where every tool call is, in the session's transcript, and the model
// sees it in its own history.
func NewThink() tool.Tool {
	return newBuiltin[ThinkInput](NameThink, tool.ClassRead, thinkDescription, think,
		tool.WithSchema(func(s *jsonschema.Schema) {
			min := 1
			s.Properties["thought"].MinLength = &min
		}))
}

func think(_ context.Context, _ *tool.Env, in ThinkInput) (tool.Result, error) {
	if strings.TrimSpace(in.Thought) == "" {
		return tool.Errorf("thought is blank; write the reasoning, or carry on without the tool"), nil
	}
	return tool.Result{Output: "Thought recorded."}, nil
}

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/tools/tool"
)

// Set is an immutable, ordered collection of tools with unique names.
// Filtering returns a new Set; a Set is never mutated after construction.
type Set struct {
	list  []tool.Tool
	index map[string]tool.Tool
}

// NewSet builds a Set. It panics on duplicate names (a programming error).
func NewSet(ts ...tool.Tool) Set {
	s := Set{index: make(map[string]tool.Tool, len(ts))}
	for _, t := range ts {
		name := t.Info().Name
		if _, dup := s.index[name]; dup {
			panic(fmt.Sprintf("tools: duplicate tool %q", name))
		}
		s.index[name] = t
		s.list = append(s.list, t)
	}
	return s
}

// Same reports whether s and o are one Set (o a copy of s), not merely
// sets of equal tools: a cheap check that something derived from s is
// still current.
func (s Set) Same(o Set) bool {
	return len(s.list) == len(o.list) && (len(s.list) == 0 || &s.list[0] == &o.list[0])
}

// Get returns the tool named name.
func (s Set) Get(name string) (tool.Tool, bool) {
	t, ok := s.index[name]
	return t, ok
}

// Len is the number of tools.
func (s Set) Len() int { return len(s.list) }

// All returns the tools in order.
func (s Set) All() []tool.Tool { return slices.Clone(s.list) }

// Names returns the tool names in order.
func (s Set) Names() []string {
	names := make([]string, len(s.list))
	for i, t := range s.list {
		names[i] = t.Info().Name
	}
	return names
}

// Filter returns the tools for which keep is true.
func (s Set) Filter(keep func(tool.Info) bool) Set {
	var out []tool.Tool
	for _, t := range s.list {
		if keep(t.Info()) {
			out = append(out, t)
		}
	}
	return NewSet(out...)
}

// Map returns a Set with every tool wrapped by each decorator, in order.
func (s Set) Map(decorators ...func(tool.Tool) tool.Tool) Set {
	out := make([]tool.Tool, len(s.list))
	for i, t := range s.list {
		for _, d := range decorators {
			t = d(t)
		}
		out[i] = t
	}
	return NewSet(out...)
}

// With returns a Set holding s's tools followed by ts.
func (s Set) With(ts ...tool.Tool) Set {
	return NewSet(append(s.All(), ts...)...)
}

// Defs returns the model-facing definitions of the tools.
func (s Set) Defs() []llm.ToolDef {
	defs := make([]llm.ToolDef, len(s.list))
	for i, t := range s.list {
		info := t.Info()
		defs[i] = llm.ToolDef{Name: info.Name, Description: info.Description, Parameters: info.Schema}
	}
	return defs
}

// Run runs the named tool. An unknown name is an error Result listing the
// tools that exist, so the model can correct itself.
func (s Set) Run(ctx context.Context, env *tool.Env, name string, input json.RawMessage) (tool.Result, error) {
	t, ok := s.index[name]
	if !ok {
		return tool.Errorf("%v %q: available tools are %v", tool.ErrUnknownTool, name, s.Names()), nil
	}
	return t.Run(ctx, env, input)
}

package actors

import (
	"context"
	"encoding/json"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// restrictCommands keeps an agent's ExecuteCommand to the command
// patterns of its definition (Claude Code's Bash(git diff:*) spec): a
// command runs only when it is one simple command whose words are all
// literal and match a pattern. Anything else — a pipeline, a list, a
// substitution, a variable — is refused before the session's policy and
// the sandbox even see it; those still apply to what passes.
func restrictCommands(patterns []string) func(tool.Tool) tool.Tool {
	var compiled []policy.Pattern
	for _, p := range patterns {
		if c, err := policy.ParsePattern(p); err == nil {
			compiled = append(compiled, c)
		}
	}
	return func(t tool.Tool) tool.Tool {
		if t.Info().Name != tools.NameExecuteCommand {
			return t
		}
		return tools.Wrap(t, func(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
			var in struct {
				Command string `json:"command"`
			}
			if err := json.Unmarshal(input, &in); err != nil {
				return t.Run(ctx, env, input) // the tool reports its own input errors
			}
			if argv, ok := simpleCommand(in.Command); ok {
				for _, p := range compiled {
					if p.Match(argv) {
						return t.Run(ctx, env, input)
					}
				}
			}
			res := tool.Errorf("this agent may run only commands matching %s, each alone (no pipes, lists or substitutions); `%s` is not one",
				strings.Join(patterns, ", "), in.Command)
			res.Denied = true
			return res, nil
		})
	}
}

// simpleCommand returns the argv of command when it is exactly one simple
// command of literal words (quotes allowed), with no redirection.
func simpleCommand(command string) ([]string, bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return nil, false
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	argv := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		lit, ok := literal(w)
		if !ok {
			return nil, false
		}
		argv = append(argv, lit)
	}
	return argv, true
}

// literal is a word's value when it holds no expansion.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(strings.ReplaceAll(p.Value, "\\", ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

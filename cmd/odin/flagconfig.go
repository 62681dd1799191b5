package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/odin-code/odin/config"
)

// configFlags names the flag that sets each config key of typedFlags, as
// the user types it.
var configFlags = map[string]string{
	"models.main":        "--model",
	"models.small":       "--small-model",
	"mode":               "--mode",
	"max_turns":          "--max-turns",
	"budget.session.usd": "--max-budget-usd",
	"log.file":           "--log-file",
	"log.level":          "--log-level",
	"store.url":          "--store",
}

// configError is the usage error of a configuration that did not load.
// When the user's flags are all that is wrong (flagProblems), it is one
// line, which Main prefixes with the command and its --help; otherwise
// the flags' problems keep their place among the files'.
func (g *globalFlags) configError(err error) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		problems, told := g.flagProblems(ce.Problems)
		if told > 0 && told == len(problems) {
			lines := make([]string, len(problems))
			for i, p := range problems {
				lines[i] = p.String()
			}
			return usageError("%s", strings.Join(lines, "; "))
		}
		if told > 0 {
			err = &config.Error{Problems: problems}
		}
	}
	return &exitError{code: exitUsage, err: err}
}

// flagFailure is f with its flags' problems told as flagProblems tells
// them, for odin doctor's list.
func (g *globalFlags) flagFailure(f *configFailure) *configFailure {
	var ce *config.Error
	if f == nil || !errors.As(f.err, &ce) {
		return f
	}
	problems, told := g.flagProblems(ce.Problems)
	if told == 0 {
		return f
	}
	return &configFailure{err: &config.Error{Problems: problems}, leftOut: f.leftOut}
}

// flagProblems tells each problem with a value the user typed as a flag
// by that flag and value: config's "flags" layer names it by its key
// ("flags: mode: must be one of ask, plan, edit (got "bogus")"), which is
// not what was typed; the command line's other usage errors name the
// flag (`--mode "bogus": must be one of ask, plan, edit`). told counts
// them; the others are as they were.
func (g *globalFlags) flagProblems(in []config.Problem) (out []config.Problem, told int) {
	typed := g.typedFlags()
	out = slices.Clone(in)
	for i, p := range out {
		v, set := typed[p.Key]
		name := configFlags[p.Key]
		if _, replaced := g.overrides[p.Key]; p.Source != "flags" || !set || name == "" || replaced {
			// A profile's key or a command's own override was not typed.
			continue
		}
		msg := p.Msg
		// The value leads the problem; it need not trail it too.
		if j := strings.LastIndex(msg, " (got "); j > 0 && strings.HasSuffix(msg, ")") {
			msg = msg[:j]
		}
		out[i] = config.Problem{Source: fmt.Sprintf("%s %q", name, fmt.Sprint(v)), Msg: msg}
		told++
	}
	return out, told
}

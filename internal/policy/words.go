package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// evalWord evaluates a word statically. Brace expansion yields several
// words; anything that needs the shell at run time (parameters,
// substitutions, arithmetic, extended globs) yields a dynamic word.
func evalWord(wd *syntax.Word) []word {
	if wd == nil {
		return nil
	}
	cp := *wd
	cp.Parts = slices.Clone(wd.Parts)
	if syntax.SplitBraces(&cp) {
		var out []word
		for bw, err := range expand.BracesSeq(nil, &cp) {
			if err != nil || len(out) >= 256 {
				return []word{{text: printNode(wd)}}
			}
			out = append(out, evalSingle(bw))
		}
		return out
	}
	return []word{evalSingle(&cp)}
}

func evalSingle(wd *syntax.Word) word {
	v := word{static: true}
	for i, part := range wd.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if pattern.HasMeta(p.Value, 0) {
				v.glob = true
			}
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				v.tilde = true
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if p.Dollar {
				// $"..." is translated through the locale's message
				// catalogue at run time.
				v.static = false
			}
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					v.static = false
				}
			}
		case *syntax.ArithmExp:
			v.static = false // a number: it cannot split
		case *syntax.ParamExp:
			v.static = false
			v.splits = v.splits || !numericParam(p)
		default:
			v.static = false
			v.splits = true
		}
	}
	if v.static {
		s, err := expand.Literal(nil, wd)
		if err != nil {
			v.static = false
		} else {
			v.text = s
		}
	}
	if !v.static {
		v.text = printNode(wd)
		for _, part := range wd.Parts {
			lit, ok := part.(*syntax.Lit)
			if !ok {
				break
			}
			v.prefix += lit.Value
		}
	}
	return v
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, x := range ws {
		out[i] = x.text
	}
	return out
}

func printNode(n syntax.Node) string {
	// A node field the parser leaves empty (the value of arr=([0]=)) is a
	// typed nil, which the printer dereferences.
	if n == nil || reflect.ValueOf(n).IsNil() {
		return ""
	}
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, n); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return strings.TrimSpace(b.String())
}

// numericParam reports $#, $?, $$, $! and ${#name}, which always expand
// to one number.
func numericParam(p *syntax.ParamExp) bool {
	if p.Length && !p.Excl && p.Param != nil {
		return true
	}
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 {
		return false
	}
	switch p.Param.Value {
	case "#", "?", "$", "!":
		return true
	}
	return false
}

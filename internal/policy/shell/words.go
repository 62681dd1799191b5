package shell

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// Word is a shell word after static evaluation.
type Word struct {
	Text   string // the value after quote removal, or the source text when dynamic
	Prefix string // for a dynamic word: the static text it starts with
	Static bool   // the value is known without running anything
	Glob   bool   // contains unquoted pattern characters
	Tilde  bool   // starts with an unquoted ~
	Splits bool   // has an unquoted expansion, so it may become several words
}

// Eval evaluates a word statically. Brace expansion yields several
// words; anything that needs the shell at run time (parameters,
// substitutions, arithmetic, extended globs) yields a dynamic word.
func Eval(wd *syntax.Word) []Word {
	if wd == nil {
		return nil
	}
	cp := *wd
	cp.Parts = slices.Clone(wd.Parts)
	if syntax.SplitBraces(&cp) {
		var out []Word
		for bw, err := range expand.BracesSeq(nil, &cp) {
			if err != nil || len(out) >= 256 {
				return []Word{{Text: Print(wd)}}
			}
			out = append(out, evalSingle(bw))
		}
		return out
	}
	return []Word{evalSingle(&cp)}
}

func evalSingle(wd *syntax.Word) Word {
	v := Word{Static: true}
	for i, part := range wd.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if pattern.HasMeta(p.Value, 0) {
				v.Glob = true
			}
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				v.Tilde = true
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if p.Dollar {
				// $"..." is translated through the locale's message
				// catalogue at run time.
				v.Static = false
			}
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					v.Static = false
				}
			}
		case *syntax.ArithmExp:
			v.Static = false // a number: it cannot split
		case *syntax.ParamExp:
			v.Static = false
			v.Splits = v.Splits || !numericParam(p)
		default:
			v.Static = false
			v.Splits = true
		}
	}
	if v.Static {
		s, err := expand.Literal(nil, wd)
		if err != nil {
			v.Static = false
		} else {
			v.Text = s
		}
	}
	if !v.Static {
		v.Text = Print(wd)
		for _, part := range wd.Parts {
			lit, ok := part.(*syntax.Lit)
			if !ok {
				break
			}
			v.Prefix += lit.Value
		}
	}
	return v
}

func Texts(ws []Word) []string {
	out := make([]string, len(ws))
	for i, x := range ws {
		out[i] = x.Text
	}
	return out
}

func Print(n syntax.Node) string {
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

package shell

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates text as arithmetic in many places, and arithmetic is code:
// a variable reference with a subscript (b[...]) expands the subscript,
// running every $(...) in it, and the operand text itself is expanded
// again after its quotes are removed, so a quoted '$(cmd)' runs cmd too
// (a['$(cmd)']=1, ${@:'$(cmd)'}, let 'a[$(cmd)]'). The values of the
// variables arithmetic names are evaluated the same way (x='b[$(cmd)]';
// echo $((x))).
//
// One rule decides every such operand: it is safe only when it is a
// decimal number, or operators over decimal numbers. Anything else — a
// name, a parameter expansion, a quoted part with anything but digits, a
// command or process substitution — cannot be checked. The places bash
// evaluates arithmetic are the table below, each with examples the
// policy must refuse and examples it must allow; TestArithContexts runs
// them through Commands.Check and, where bash is installed,
// TestArithContextsInBash proves with a canary file that every example
// listed as Runs does run its substitution in bash and every Safe example
// with a canary does not.
//
// Contexts whose operand is a variable name in a builtin's argument
// (test -v, unset, read, printf -v...) have no syntax node of their own:
// their entries have no operands function, and the name is checked by
// the policy walker (internal/policy, builtins.go); the examples still run.

// ArithContext is one place where bash evaluates arithmetic.
type ArithContext struct {
	// Name says where, for the reason given to the model.
	Name string
	// Operands returns the arithmetic operands of n when n is this
	// context, or nil.
	Operands func(n syntax.Node) []syntax.Node
	// Runs are commands bash runs the canary in ($(touch CANARY)); the
	// policy must refuse each.
	Runs []string
	// Refused are further commands the policy must refuse: bash may not
	// run anything for them as written, but the check cannot tell them
	// from those that do (a variable's value, an associative array).
	Refused []string
	// Safe are commands the policy must allow in ask mode; bash must not
	// run a canary in any of them.
	Safe []string
}

// Canary is the file the examples' substitutions create.
const Canary = "CANARY"

// ArithContexts lists every place bash evaluates arithmetic. Adding a
// form the rule misses is a line here.
var ArithContexts = []ArithContext{
	{
		Name: "arithmetic expansion",
		Operands: func(n syntax.Node) []syntax.Node {
			return arithOf(n, func(x *syntax.ArithmExp) []syntax.ArithmExpr { return []syntax.ArithmExpr{x.X} })
		},
		Runs: []string{
			"echo $(( 'a[$(touch CANARY)]' ))",
			"echo $['a[$(touch CANARY)]']",
			"echo $[ x ]",
			"echo $(( x + 1 ))",
			"echo $(( a[$(touch CANARY)] ))",
			`echo $(( "$(touch CANARY)" ))`,
			"case 1 in $(( 'a[$(touch CANARY)]' ))) ;; esac",
		},
		Safe: []string{
			"echo $(( 1 + 2 * 3 ))",
			"echo $[ 1 ] $[ '1' ]",
			"echo $(( -1 )) $(( (2) )) $(( $((1)) ))",
		},
	},
	{
		Name: "arithmetic command (( ))",
		Operands: func(n syntax.Node) []syntax.Node {
			return arithOf(n, func(x *syntax.ArithmCmd) []syntax.ArithmExpr { return []syntax.ArithmExpr{x.X} })
		},
		Runs: []string{
			"(( 'a[$(touch CANARY)]' ))",
			"(( x ))",
		},
		Refused: []string{
			"(( a['$(touch CANARY)'] ))", // bash keeps these quotes; the check does not model it
			"(( i++ ))",
		},
		Safe: []string{"(( 1 < 2 ))"},
	},
	{
		Name: "let",
		Operands: func(n syntax.Node) []syntax.Node {
			return arithOf(n, func(x *syntax.LetClause) []syntax.ArithmExpr { return x.Exprs })
		},
		Runs: []string{
			"let 'a[$(touch CANARY)]=1'",
			`let "a[$(touch CANARY)]=1"`,
			"let x",
			"'let' 'a[$(touch CANARY)]'",       // a quoted let is the builtin (internal/policy/builtins.go)
			"builtin let 'a[$(touch CANARY)]'", // so is one behind builtin
		},
		Refused: []string{"let i=1"},
		Safe:    []string{"let 1+1"},
	},
	{
		Name: "for (( ; ; ))",
		Operands: func(n syntax.Node) []syntax.Node {
			return arithOf(n, func(x *syntax.CStyleLoop) []syntax.ArithmExpr { return []syntax.ArithmExpr{x.Init, x.Cond, x.Post} })
		},
		Runs: []string{
			"for ((i='$(touch CANARY)';i<1;i++)); do :; done",
			"for ((i=x;i<1;i++)); do :; done",
		},
		Refused: []string{"for ((i=0;i<3;i++)); do echo; done"},
		Safe:    []string{"for ((;0;)); do :; done"},
	},
	{
		Name: "subscript of an assignment",
		Operands: func(n syntax.Node) []syntax.Node {
			return arithOf(n, func(x *syntax.Assign) []syntax.ArithmExpr { return []syntax.ArithmExpr{x.Index} })
		},
		Runs: []string{
			"a['$(touch CANARY)']=1",
			`a["$(touch CANARY)"]=1`,
			"a[$(touch CANARY)]=1",
			"a[x]=1",
			"a['$(touch CANARY)']+=1",
			"declare a['$(touch CANARY)']=1",
			"typeset a['$(touch CANARY)']=1",
			"local a['$(touch CANARY)']=1",
		},
		Refused: []string{
			"export a['$(touch CANARY)']=1",        // bash 5.2 rejects the name first
			"readonly a['$(touch CANARY)']=1",      // likewise
			"declare -A m; m['$(touch CANARY)']=1", // an associative array's key is a string
		},
		Safe: []string{
			"a[1]=x",
			"a[0]=",
			"declare a[2]=y",
		},
	},
	{
		Name: "subscript of an array element",
		Operands: func(n syntax.Node) []syntax.Node {
			return arithOf(n, func(x *syntax.ArrayElem) []syntax.ArithmExpr { return []syntax.ArithmExpr{x.Index} })
		},
		Runs: []string{
			"a=([$(touch CANARY)]=1)",
			"a+=(['$(touch CANARY)']=1)",
			"a=([x]=1)",
			"declare -a a=(['$(touch CANARY)']=1)",
		},
		Safe: []string{
			"arr=([0]=y [1]=z)",
			"z=([0]=)",
			"z=([0]=) y=([1]=x)",
		},
	},
	{
		Name: "subscript of an expansion",
		Operands: func(n syntax.Node) []syntax.Node {
			return arithOf(n, func(x *syntax.ParamExp) []syntax.ArithmExpr {
				if x.Index == nil || allElements(x.Index) {
					return nil
				}
				return []syntax.ArithmExpr{x.Index}
			})
		},
		Runs: []string{
			"echo ${a['$(touch CANARY)']}",
			`echo "${a['$(touch CANARY)']}"`,
			"echo ${#a['$(touch CANARY)']}",
			"echo ${a['$(touch CANARY)']:-1}",
			": ${a['$(touch CANARY)']:=1}",
			": ${a[5]:=${b['$(touch CANARY)']}}",
			"echo ${a[x]}",
			"cat <<EOF\n${a['$(touch CANARY)']}\nEOF",
		},
		Safe: []string{
			"echo ${a[1]} ${a[@]} ${a[*]} ${#a[@]}",
			"echo ${a[-1]}",
			`echo "${a[0]}"`,
			": ${a[1]:=1}",
		},
	},
	{
		Name: "offset or length of a slice",
		Operands: func(n syntax.Node) []syntax.Node {
			return arithOf(n, func(x *syntax.ParamExp) []syntax.ArithmExpr {
				if x.Slice == nil {
					return nil
				}
				return []syntax.ArithmExpr{x.Slice.Offset, x.Slice.Length}
			})
		},
		Runs: []string{
			"echo ${@:'$(touch CANARY)'}",
			"echo ${*:'$(touch CANARY)'}",
			"echo ${a[@]:'$(touch CANARY)'}",
			"echo ${x:1:'$(touch CANARY)'}",
			"echo ${x:'$(touch CANARY)'}",
			"echo ${@:1:'$(touch CANARY)'}",
			"echo ${x:x}",
		},
		Safe: []string{
			"echo ${x:1:2} ${@:2} ${a[@]: -1}",
			"echo ${x:0}",
		},
	},
	{
		Name: "arithmetic comparison in [[ ]]",
		Operands: func(n syntax.Node) []syntax.Node {
			b, ok := n.(*syntax.BinaryTest)
			if !ok {
				return nil
			}
			switch b.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsGtr, syntax.TsLeq, syntax.TsGeq:
				return []syntax.Node{b.X, b.Y}
			}
			return nil
		},
		Runs: []string{
			"[[ 'a[$(touch CANARY)]' -eq 1 ]]",
			"[[ $x -eq 1 ]]",
			"[[ x -eq 1 ]]",
			"[[ 1 -lt 'x' ]]",
		},
		Refused: []string{
			`[[ "$n" -gt 0 ]]`,
			"[[ $# -gt 0 ]]",
		},
		Safe: []string{
			"[[ 1 -eq 1 ]]",
			"[[ -1 -lt '2' ]]",
			"[[ $x == 1 ]]",
			"test 'a[$(touch CANARY)]' -eq 1", // test and [ read plain integers (legal_number)
			"[ 'a[$(touch CANARY)]' -eq 1 ]",
			"[ x -lt 1 ]",
		},
	},
	{
		// mvdan.cc/sh reads {a[i]}>file as a word and a redirection; bash
		// reads the variable to store the new descriptor in.
		Name: "descriptor variable with a subscript",
		Operands: func(n syntax.Node) []syntax.Node {
			s, ok := n.(*syntax.Stmt)
			if !ok {
				return nil
			}
			return descriptorWords(s)
		},
		Runs: []string{
			"echo {a['$(touch CANARY)']}>/dev/null",
			": {a['$(touch CANARY)']}</dev/null",
			"echo {a['$(\ntouch CANARY\n)']}>/dev/null",
			"{a['$(touch CANARY)']}>/dev/null",
		},
		Safe: []string{
			"echo {a['$(touch CANARY)']} >/dev/null",
			"echo {a,b}>/dev/null",
			"exec {a[1]}>/dev/null",
		},
	},
	// Contexts checked by the walker (internal/policy/builtins.go, testVarNames), listed for
	// their examples.
	{
		Name: "variable name a builtin evaluates",
		Runs: []string{
			"test -v 'a[$(touch CANARY)]'",
			"[ -v 'a[$(touch CANARY)]' ]",
			"[[ -v 'a[$(touch CANARY)]' ]]",
			"unset 'a[$(touch CANARY)]'",
			"unset 'a[x]'",
			"printf -v 'a[$(touch CANARY)]' x",
			"declare 'a[$(touch CANARY)]=1'",
			"builtin declare 'a[$(touch CANARY)]=1'",
			"read 'a[$(touch CANARY)]' < /dev/null; :",
			"echo ${!a['$(touch CANARY)']}",
		},
		Refused: []string{
			"wait -p 'a[$(touch CANARY)]'", // assigns only when a child has ended
			"[[ -v a[i] ]]",
			"getopts a 'a[$(touch CANARY)]'",
		},
		Safe: []string{
			"[ -v name ] && test -v 'a[1]'",
			"unset -v x y",
		},
	},
	{
		// Checked by compoundValue (internal/policy/commands.go); v is set by the
		// preamble, as an earlier command could have.
		Name: "array assignment a declaration re-parses",
		Runs: []string{
			"declare -a arr='([$(touch CANARY)]=1)'",
			"typeset -a arr='([x]=1)'",
			"declare -a 'arr=([x]=1)'",
			`declare -a arr="$v"`,
			"declare -a arr=$v",
			`readonly -a arr="$v"`,
			`declare -g -a arr="$v"`,
			`declare -a arr; declare arr="$v"`,
			`declare -A m="$v"`,
		},
		Refused: []string{
			`arr=(1); local arr="$v"`, // a new local is no array; the check does not track which names are arrays
			"local s=$(cat main.go)",
		},
		Safe: []string{
			"declare -a arr=(1 2)",
			"declare y=1 z=(1 2)",
			`arr="$v"`,
		},
	},
	{
		// Checked by variable (internal/policy/commands.go): every way of assigning them.
		Name: "assignment to a shell variable bash evaluates",
		Runs: []string{
			"OPTIND='a[$(touch CANARY)]'; getopts a o",
			"RANDOM='a[$(touch CANARY)]'",
			"SRANDOM=x",
			"HISTCMD=x",
			"printf -v RANDOM %s x",
		},
		Refused: []string{"RANDOM=1"},
		Safe:    []string{"echo $RANDOM $OPTIND"},
	},
	{
		Name: "declare -i and -n",
		Runs: []string{
			"declare -i q; q='a[$(touch CANARY)]'",
			"declare -n r='a[$(touch CANARY)]'; echo $r",
		},
		Refused: []string{"declare -i y=1"},
		Safe: []string{ // builtins that read a number with legal_number, not arithmetic
			"shift 'a[$(touch CANARY)]' 2>/dev/null; :",
			"printf '%d' 'a[$(touch CANARY)]'; :",
			"exit 'a[$(touch CANARY)]'",
		},
	},
}

// arithOf adapts a typed operand getter to the table's signature.
func arithOf[T syntax.Node](n syntax.Node, get func(T) []syntax.ArithmExpr) []syntax.Node {
	x, ok := n.(T)
	if !ok {
		return nil
	}
	var out []syntax.Node
	for _, e := range get(x) {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// descriptorRef is a word bash reads as {name[subscript]} before a
// redirection operator.
var descriptorRef = regexp.MustCompile(`(?s)^\{[A-Za-z_][A-Za-z0-9_]*\[.*\]\}$`)

// descriptorWords returns the words of s that end right where one of its
// redirections starts and read as {name[subscript]}: bash takes such a
// word as the variable to store the new descriptor in, evaluating the
// subscript, where the parser sees an argument.
func descriptorWords(s *syntax.Stmt) []syntax.Node {
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if len(s.Redirs) == 0 {
		return nil
	}
	var words []*syntax.Word
	if ok {
		words = ce.Args
	}
	var out []syntax.Node
	for _, r := range s.Redirs {
		if r.N != nil {
			continue
		}
		for _, wd := range words {
			if wd.End() == r.OpPos && descriptorRef.MatchString(Print(wd)) {
				out = append(out, wd)
			}
		}
	}
	return out
}

// ArithSubject names the context n for a finding.
func ArithSubject(n syntax.Node) string {
	switch x := n.(type) {
	case *syntax.CStyleLoop:
		return "for ((" + ExprText(x.Init) + "; " + ExprText(x.Cond) + "; " + ExprText(x.Post) + "))"
	case *syntax.BinaryTest:
		return "[[ " + ExprText(x) + " ]]"
	}
	return ExprText(n)
}

// ExprText prints an arithmetic or test expression, which the printer
// prints only inside the node that holds it.
func ExprText(n syntax.Node) string {
	switch x := n.(type) {
	case nil:
		return ""
	case *syntax.Word:
		return Print(x)
	case syntax.ArithmExpr:
		if x == nil {
			return ""
		}
		s := Print(&syntax.ArithmExp{X: x})
		return strings.TrimSuffix(strings.TrimPrefix(s, "$(("), "))")
	case syntax.TestExpr:
		s := Print(&syntax.TestClause{X: x})
		return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, "[["), "]]"))
	}
	return Print(n)
}

// ArithLiteral reports an arithmetic operand that is a decimal number, or
// operators over such operands: the only operands whose evaluation runs
// nothing and reads no variable. A word may be quoted as long as its value
// is digits (an optional sign first, as [[ -1 -lt 2 ]] has).
func ArithLiteral(n syntax.Node) bool {
	switch x := n.(type) {
	case *syntax.Word:
		if x == nil {
			return false
		}
		if len(x.Parts) == 1 {
			if ae, ok := x.Parts[0].(*syntax.ArithmExp); ok {
				return ArithLiteral(ae.X)
			}
		}
		ws := Eval(x)
		return len(ws) == 1 && ws[0].Static && !ws[0].Glob && IsNumber(strings.TrimLeft(ws[0].Text, "+-"))
	case *syntax.BinaryArithm:
		if x == nil {
			return false
		}
		switch x.Op {
		case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
			syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
			return false
		}
		return ArithLiteral(x.X) && ArithLiteral(x.Y)
	case *syntax.UnaryArithm:
		if x == nil {
			return false
		}
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			return false
		}
		return ArithLiteral(x.X)
	case *syntax.ParenArithm:
		return x != nil && ArithLiteral(x.X)
	}
	return false
}

// allElements reports the subscripts @ and *, which select every element
// without evaluating anything.
func allElements(x syntax.ArithmExpr) bool {
	wd, ok := x.(*syntax.Word)
	if !ok || wd == nil || len(wd.Parts) != 1 {
		return false
	}
	lit, ok := wd.Parts[0].(*syntax.Lit)
	return ok && (lit.Value == "@" || lit.Value == "*")
}

// IsNumber reports a non-empty string of decimal digits.
func IsNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

package policy

import (
	"fmt"

	"mvdan.cc/sh/v3/syntax"

	"github.com/odin-code/odin/internal/policy/shell"
)

// arithNode applies the arithmetic rule to n if n is one of the contexts.
func (w *walker) arithNode(n syntax.Node) {
	for i := range shell.ArithContexts {
		c := &shell.ArithContexts[i]
		if c.Operands == nil {
			continue
		}
		for _, op := range c.Operands(n) {
			if shell.ArithLiteral(op) {
				continue
			}
			text := shell.ExprText(op)
			w.unresolvable(shell.ArithSubject(n), fmt.Sprintf("bash evaluates %s in the %s as arithmetic, which runs any $(...) in it, quoted or not, and evaluates the values of the variables it names as code", text, c.Name))
			w.codeText(text)
		}
	}
}

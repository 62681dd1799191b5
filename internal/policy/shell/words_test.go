package shell

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"
)

func TestEval(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []Word
	}{
		{`abc`, []Word{{Text: "abc", Static: true}}},
		{`'a b'`, []Word{{Text: "a b", Static: true}}},
		{`a{1,2}`, []Word{{Text: "a1", Static: true}, {Text: "a2", Static: true}}},
		{`*.go`, []Word{{Text: "*.go", Static: true, Glob: true}}},
		{`~/x`, []Word{{Text: "~/x", Static: true, Tilde: true}}},
		{`pre$HOME`, []Word{{Text: "pre$HOME", Prefix: "pre", Splits: true}}},
		{`"$x"`, []Word{{Text: `"$x"`}}},
	} {
		f, err := syntax.NewParser().Parse(strings.NewReader("echo "+c.src), "")
		if err != nil {
			t.Fatal(err)
		}
		call := f.Stmts[0].Cmd.(*syntax.CallExpr)
		if diff := cmp.Diff(c.want, Eval(call.Args[1])); diff != "" {
			t.Errorf("Eval(%s) (-want +got):\n%s", c.src, diff)
		}
	}
}

func TestIsNumber(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "42": true, "": false, "-1": false, "1a": false, "٣": false} {
		if IsNumber(s) != want {
			t.Errorf("IsNumber(%q) = %v", s, !want)
		}
	}
}

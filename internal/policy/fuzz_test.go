package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
	"mvdan.cc/sh/v3/syntax"
)

// FuzzCommandsCheck feeds arbitrary text to the command policy: it must
// never panic, its verdict must be consistent with its findings, and ask
// mode is never more permissive than edit mode. The crashers found so far
// and the arithmetic forms that once passed as read-only are seeds under
// testdata/fuzz/FuzzCommandsCheck, which go test runs every time.
func FuzzCommandsCheck(f *testing.F) {
	for _, s := range []string{
		"ls -la", "cd .. && cat x", "bash -c 'sh -c \"git push\"'", "echo $(( a[$(id)] ))",
		"cat <<EOF\n$(x)\nEOF", "{a,b}{c,d}", "x=1 y=2 env -u A -i B=2 timeout 3 nice -n1 ls",
		"f() { :; }", "case $x in a) ls;; esac", "for ((i=0;i<3;i++)); do echo; done",
		"ls > >(cat) 2>&1 <&-", "declare -n r=PATH", "coproc ls", "time -p ls", "[[ $a -eq 1 ]]",
		"sed -e 's/a/b/w x' -e p", "git -C .. -c a=b log", "xargs -I{} sh -c '{}'", "${!x}", "echo ${x@P}",
		"test -v 'a[$(git push)]'", "jobs -lx sudo ls", "cd .git && echo x >> /proc/self/cwd/config",
		"unset 'a[x]' PATH", "declare 'b[$(x)]=1' -i y=z", "arr=([i]=1); : ${Q:=$(x)}", "exec {P}>/dev/null",
		"grep -R x .", "git push --force origin +main", "find . -exec rm -rf {} +", "read -ra 'a[$(y)]' <<< x",
	} {
		f.Add(s, uint8(0))
	}
	fx := newFixture(f)
	c := fx.commands(f)
	modes := []messages.Mode{messages.ModeAsk, messages.ModePlan, messages.ModeEdit, ""}
	f.Fuzz(func(t *testing.T, cmd string, m uint8) {
		v := c.Check(cmd, modes[int(m)%len(modes)])
		// Ask mode never runs what edit mode would question.
		if ask, edit := c.Check(cmd, messages.ModeAsk), c.Check(cmd, messages.ModeEdit); ask.Action < edit.Action {
			t.Fatalf("ask mode %v is weaker than edit mode %v", ask, edit)
		}
		max := Allow
		for _, fd := range v.Findings {
			if fd.Action > max {
				max = fd.Action
			}
			if fd.Reason == "" || fd.Rule == "" {
				t.Fatalf("finding without reason or rule: %+v", fd)
			}
		}
		if max != v.Action {
			t.Fatalf("verdict %v but strongest finding %v", v.Action, max)
		}
	})
}

// FuzzGuardCheck: arbitrary paths never panic and a write verdict is never
// weaker than the read verdict for the same path.
func FuzzGuardCheck(f *testing.F) {
	for _, s := range []string{"main.go", "../x", "out_link/../../..", "gitlink/config", ".odin/plans/../x", "/", "a//b/./c"} {
		f.Add(s)
	}
	fx := newFixture(f)
	g := fx.guard(f)
	f.Fuzz(func(t *testing.T, p string) {
		_, rv, rerr := g.Check(p, tool.AccessRead)
		_, wv, werr := g.Check(p, tool.AccessWrite)
		if (rerr == nil) != (werr == nil) {
			t.Fatalf("read err %v, write err %v", rerr, werr)
		}
		if rerr == nil && wv.Action < rv.Action {
			t.Fatalf("write %v weaker than read %v for %q", wv, rv, p)
		}
	})
}

// arithTemplates place an operand in each arithmetic context bash has
// (arith.go); %s is the operand.
var arithTemplates = []string{
	"a[%s]=1", "a[%s]+=1", "z=([%s]=1)", "declare a[%s]=1", "echo ${a[%s]}", "echo ${#a[%s]}", ": ${a[%s]:=1}",
	"echo ${x:%s}", "echo ${x:1:%s}", "echo ${@:%s}", "echo ${a[@]:%s}", "let %s", "let a[%s]=1",
	"echo $(( %s ))", "echo $[ %s ]", "(( %s ))", "for ((i=%s;i<1;i++)); do :; done", "[[ %s -eq 1 ]]",
	"echo {a[%s]}>/dev/null", "cat <<< ${a[%s]}", "echo x > ${a[%s]}", "case ${a[%s]} in *) ;; esac", "[[ -n ${a[%s]} ]]",
	`echo "${a[%s]}"`, "y=${a[%s]}", "local l=${x:%s}", "for i in ${a[%s]}; do :; done", "cat <<EOF\n${a[%s]}\nEOF",
	"echo $(echo ${a[%s]})", "bash -c 'echo ${a[%s]}'", "timeout 1 echo ${a[%s]}", "select i in ${x:%s}; do :; done",
}

// FuzzArithOperand: an operand holding a command substitution, quoted
// with single or double quotes or not at all, is never allowed in ask
// mode in any arithmetic context, since bash would run it.
func FuzzArithOperand(f *testing.F) {
	for _, s := range []string{"$(touch CANARY)", "`touch CANARY`", "1+$(id)", "b[$(cat /etc/passwd > out)]", "$( : )"} {
		f.Add(s)
	}
	fx := newFixture(f)
	c := fx.commands(f)
	f.Fuzz(func(t *testing.T, s string) {
		// Only text bash reads as holding a command substitution.
		doc, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(s))
		if err != nil || doc == nil {
			return
		}
		subst := false
		syntax.Walk(doc, func(n syntax.Node) bool {
			_, ok := n.(*syntax.CmdSubst)
			subst = subst || ok
			return !subst
		})
		if !subst {
			return
		}
		var forms []string
		if !strings.Contains(s, "'") {
			forms = append(forms, "'"+s+"'")
		}
		if !strings.ContainsAny(s, "\"\\") {
			forms = append(forms, `"`+s+`"`)
			if _, ok := doc.Parts[0].(*syntax.CmdSubst); ok && len(doc.Parts) == 1 {
				// Unquoted, only a substitution alone stays one operand:
				// other text could make ${x:...} another expansion
				// (${x:+...}) or split the word.
				forms = append(forms, s)
			}
		}
		for _, tmpl := range arithTemplates {
			for _, op := range forms {
				cmd := fmt.Sprintf(tmpl, op)
				if v := c.Check(cmd, messages.ModeAsk); v.Action == Allow {
					t.Fatalf("%q is allowed in ask mode; bash runs the substitution in it", cmd)
				}
			}
		}
	})
}

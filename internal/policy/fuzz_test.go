package policy

import (
	"testing"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

// FuzzCommandsCheck feeds arbitrary text to the command policy: it must
// never panic, and its verdict must be consistent with its findings.
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
		_, rv, rerr := g.Check(p, tools.AccessRead)
		_, wv, werr := g.Check(p, tools.AccessWrite)
		if (rerr == nil) != (werr == nil) {
			t.Fatalf("read err %v, write err %v", rerr, werr)
		}
		if rerr == nil && wv.Action < rv.Action {
			t.Fatalf("write %v weaker than read %v for %q", wv, rv, p)
		}
	})
}

package policy

import (
	"testing"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

func BenchmarkCommandsCheck(b *testing.B) {
	f := newFixture(b)
	c := f.commands(b)
	for _, bc := range []struct{ name, cmd string }{
		{"simple", "git status"},
		{"pipeline", "cd sub && grep -rn TODO . | sort | uniq -c | head -20"},
		{"nested", `timeout 60 bash -c "go test ./... 2>&1 | tee test.log; git diff --stat"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				c.Check(bc.cmd, messages.ModeEdit)
			}
		})
	}
}

func BenchmarkGuardCheck(b *testing.B) {
	f := newFixture(b)
	g := f.guard(b)
	for b.Loop() {
		g.Check("sub/helper.txt", tool.AccessWrite)
	}
}

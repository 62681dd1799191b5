package helperproc_test

import (
	"testing"

	"github.com/odin-code/odin/internal/helperproc"
)

// BenchmarkCall measures one call's round trip to a running helper: the
// encoding, the pipe both ways and the routing by ID.
func BenchmarkCall(b *testing.B) {
	c := helperproc.New(helperproc.Config[msg]{Name: "odin-testhelper", Path: helper(b)})
	defer c.Close()
	m := msg{Action: "echo", Text: "hello"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(b.Context(), m, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStart measures a helper's life: its start in the default
// sandbox (bubblewrap here), a first call, and its close.
func BenchmarkStart(b *testing.B) {
	path := helper(b)
	for b.Loop() {
		c := helperproc.New(helperproc.Config[msg]{Name: "odin-testhelper", Path: path})
		if _, err := c.Call(b.Context(), msg{Action: "echo"}, nil); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

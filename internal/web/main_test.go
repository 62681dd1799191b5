package web

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/internal/web/fetchtest"
)

// TestMain builds odin-fetch, the process that fetches and converts pages
// (started in the sandbox, whose init is this binary re-executed), and
// fails the package if a test leaves goroutines behind: a fetch or
// search that forgot to close a body, a connection or odin-fetch's pipes.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(fetchtest.Wrap(func() int {
		if code := m.Run(); code != 0 {
			return code
		}
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			return 1
		}
		return 0
	}))
}

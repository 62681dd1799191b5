package helperproc_test

import (
	"os"
	"testing"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/internal/testbin"
)

// TestMain builds odin-testhelper, the tests' helper process, and serves
// as the sandbox's init when the sandbox re-executes the test binary.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(testbin.Wrap("odin-testhelper", "github.com/odin-code/odin/internal/helperproc/helperproctest/odin-testhelper",
		"ODIN_TESTHELPER", m.Run))
}

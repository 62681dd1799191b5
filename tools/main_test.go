package tools

import (
	"os"
	"testing"

	"github.com/odin-code/odin/internal/sandbox"
)

// TestMain lets the test binary act as the write sandbox's helper, which
// sandbox.Command re-executes.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

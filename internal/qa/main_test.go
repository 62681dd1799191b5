package qa

import (
	"os"
	"testing"

	"github.com/odin-code/odin/internal/sandbox"
)

// TestMain lets the test binary serve as the sandbox's init helper.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

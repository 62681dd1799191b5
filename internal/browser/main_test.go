package browser_test

import (
	"os"
	"testing"

	"github.com/odin-code/odin/internal/browser/browsertest"
	"github.com/odin-code/odin/internal/sandbox"
)

// TestMain builds odin-browser and serves as the sandbox's init when the
// sandbox odin-browser runs in re-executes the test binary.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(browsertest.Wrap(m.Run))
}

package repomap

import (
	"os"
	"testing"

	"github.com/odin-code/odin/internal/repomap/repomaptest"
	"github.com/odin-code/odin/internal/sandbox"
)

// TestMain builds odin-sitter, so that the tests map Python, JS/TS, Rust
// and Java through the parser process as odin does, confined: the test
// binary serves as the sandbox's init.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(repomaptest.Run(m))
}

package repomap

import (
	"os"
	"testing"

	"github.com/odin-code/odin/internal/repomap/repomaptest"
)

// TestMain builds odin-sitter, so that the tests map Python, JS/TS, Rust
// and Java through the parser process as odin does.
func TestMain(m *testing.M) { os.Exit(repomaptest.Run(m)) }

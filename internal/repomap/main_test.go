package repomap

import (
	"fmt"
	"os"
	"testing"

	"github.com/odin-code/odin/internal/repomap/repomaptest"
)

// TestMain builds odin-sitter, so that the tests map Python, JS/TS, Rust
// and Java through the parser process as odin does.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "odin-sitter")
	if err == nil {
		_, err = repomaptest.Setenv(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

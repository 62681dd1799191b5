package tools

import (
	"os"
	"testing"

	"github.com/odin-code/odin/internal/repomap/repomaptest"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/internal/web/fetchtest"
)

// TestMain lets the test binary act as the write sandbox's helper, which
// sandbox.Command re-executes.
// It also builds odin-sitter, for RepoMap's tests of other languages
// than Go, and odin-fetch, for WebFetch's.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(fetchtest.Wrap(func() int { return repomaptest.Run(m) }))
}

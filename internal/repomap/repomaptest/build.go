// Package repomaptest builds odin-sitter, the repo map's tree-sitter
// parser process, for the tests of the packages that map code.
package repomaptest

import (
	"testing"

	"github.com/odin-code/odin/internal/testbin"
)

// Run is a TestMain's body for a package whose tests map code: it builds
// odin-sitter into a temporary directory and points $ODIN_SITTER, by which
// repomap.SitterPath finds it, at it, runs the tests, removes the
// directory and returns the exit code.
func Run(m *testing.M) int {
	return testbin.Wrap("odin-sitter", "github.com/odin-code/odin/cmd/odin-sitter", "ODIN_SITTER", m.Run)
}

// Package repomaptest builds odin-sitter, the repo map's tree-sitter
// parser process, for the tests of the packages that map code.
package repomaptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Setenv builds odin-sitter into dir and points $ODIN_SITTER at it, so
// that repomap.SitterPath finds it; call it from TestMain. It returns
// the binary's path.
func Setenv(dir string) (string, error) {
	bin := filepath.Join(dir, "odin-sitter")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/odin-code/odin/cmd/odin-sitter")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building odin-sitter: %w", err)
	}
	return bin, os.Setenv("ODIN_SITTER", bin)
}

// Run is a TestMain's body for a package whose tests map code: it builds
// odin-sitter into a temporary directory (Setenv), runs the tests, removes
// the directory and returns the exit code.
func Run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "odin-sitter")
	if err == nil {
		_, err = Setenv(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	return m.Run()
}

// Package repomaptest builds odin-sitter, the repo map's tree-sitter
// parser process, for the tests of the packages that map code.
package repomaptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// Package fetchtest builds odin-fetch, WebFetch's page process, for the
// tests of the packages that fetch pages.
package fetchtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Setenv builds odin-fetch into dir and points $ODIN_FETCH at it, so that
// web.FetchPath finds it; call it from TestMain. It returns the binary's
// path.
func Setenv(dir string) (string, error) {
	bin := filepath.Join(dir, "odin-fetch")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/odin-code/odin/cmd/odin-fetch")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building odin-fetch: %w", err)
	}
	return bin, os.Setenv("ODIN_FETCH", bin)
}

// Wrap runs run (a TestMain's m.Run, or one wrapped by another helper)
// with odin-fetch built into a temporary directory, and returns its exit
// code.
func Wrap(run func() int) int {
	dir, err := os.MkdirTemp("", "odin-fetch")
	if err == nil {
		_, err = Setenv(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	return run()
}

// Run is Wrap(m.Run).
func Run(m *testing.M) int { return Wrap(m.Run) }

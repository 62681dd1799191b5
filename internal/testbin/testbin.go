// Package testbin builds Odin's helper processes (odin-sitter, odin-fetch)
// for the tests of the packages that start them, and points the
// environment variable each is found by at the build.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Setenv builds the command at pkg (an import path) into dir as name and
// sets env to its path; it returns that path.
func Setenv(dir, name, pkg, env string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	return bin, os.Setenv(env, bin)
}

// Wrap runs run (a TestMain's m.Run, or one wrapped by another helper)
// with name built from pkg into a temporary directory and env pointing at
// it, and returns run's exit code (1 when the build fails).
func Wrap(name, pkg, env string, run func() int) int {
	dir, err := os.MkdirTemp("", name)
	if err == nil {
		_, err = Setenv(dir, name, pkg, env)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	return run()
}

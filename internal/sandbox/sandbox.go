package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// helperArg marks a process started by Command as the sandbox helper.
const helperArg = "__odin_landlock_exec"

// Status says whether commands can be confined.
type Status struct {
	// Available is true when Landlock can confine writes.
	Available bool
	// ABI is the kernel's Landlock ABI version (0 when unavailable).
	ABI int
	// Reason explains why confinement is unavailable.
	Reason string
}

func (s Status) String() string {
	if s.Available {
		return fmt.Sprintf("landlock ABI %d", s.ABI)
	}
	return "no sandbox: " + s.Reason
}

// Command returns a command running name with args whose writes are
// confined to the directories in writable (and the device files of /dev).
// When confinement is unavailable it returns the plain command and a
// Status saying why; the error is for a helper binary that cannot be found.
// The program must call Main at the start of main for the helper to work.
func Command(ctx context.Context, writable []string, name string, args ...string) (*exec.Cmd, Status, error) {
	st := Probe()
	if !st.Available {
		return exec.CommandContext(ctx, name, args...), st, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, st, fmt.Errorf("sandbox: find own binary: %w", err)
	}
	dirs, err := json.Marshal(writable)
	if err != nil {
		return nil, st, fmt.Errorf("sandbox: %w", err)
	}
	return exec.CommandContext(ctx, self, append([]string{helperArg, string(dirs), name}, args...)...), st, nil
}

// Main runs the sandbox helper when the process was started by Command: it
// confines its thread and replaces itself with the command, never
// returning; a failure is printed to stderr and exits with status 126, like
// a shell that cannot run a command. In any other process it returns at
// once.
func Main() {
	if len(os.Args) < 4 || os.Args[1] != helperArg {
		return
	}
	var dirs []string
	err := json.Unmarshal([]byte(os.Args[2]), &dirs)
	if err == nil {
		err = execConfined(dirs, os.Args[3], os.Args[3:])
	}
	fmt.Fprintf(os.Stderr, "odin sandbox: %v\n", err)
	os.Exit(126)
}

// WritableDirs are the directories a confined command needs besides the
// project: the temporary directories and the user's cache (build caches,
// module downloads), plus extra. Missing directories are left out.
func WritableDirs(root string, extra ...string) []string {
	dirs := []string{root, os.TempDir(), "/tmp", "/var/tmp"}
	if c, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, c)
	}
	if m := goModCache(); m != "" {
		dirs = append(dirs, m)
	}
	dirs = append(dirs, extra...)
	var out []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}

func goModCache() string {
	if m := os.Getenv("GOMODCACHE"); m != "" {
		return m
	}
	if p := os.Getenv("GOPATH"); p != "" {
		return filepath.Join(filepath.SplitList(p)[0], "pkg", "mod")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, "go", "pkg", "mod")
	}
	return ""
}

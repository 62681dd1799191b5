package serveload

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// binDir holds the odin binary under test: ODIN_TEST_BIN_DIR, or one
// built for this run.
var binDir string

func TestMain(m *testing.M) {
	if dir := os.Getenv("ODIN_TEST_BIN_DIR"); dir != "" {
		binDir = dir
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "odin-serveload-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", dir+"/", "github.com/odin-code/odin/cmd/odin")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building odin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestServeLoadRestart: 50 sessions run 2 turns each at once against the
// built odin serve with its real store; half-way the server is stopped
// gracefully (SIGTERM) and started again on the same state directory, and
// the sessions whose turn it interrupted ask again. Afterwards every
// session's export holds every question asked and every answer given.
// ODIN_LOAD_SESSIONS=1000 runs issue 27's large case.
func TestServeLoadRestart(t *testing.T) {
	n := 50
	if testing.Short() {
		n = 10
	}
	limit := 3 * time.Minute
	if v := os.Getenv("ODIN_LOAD_SESSIONS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
			t.Fatalf("ODIN_LOAD_SESSIONS=%q: want a number of sessions", v)
		}
		limit = 20 * time.Minute
	}
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	res, err := Run(ctx, Config{
		Bin: filepath.Join(binDir, "odin"), Sessions: n, Turns: 2, Restart: true,
		Dir: t.TempDir(), Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Restarts != 1 {
		t.Errorf("the server was restarted %d times, want 1", res.Restarts)
	}
	if got, want := len(res.Lat), n*2; got != want {
		t.Errorf("%d turns finished, want %d", got, want)
	}
	t.Logf("%d turns, %d sent again after the restart; p50 %v p99 %v; serve CPU %v/turn",
		len(res.Lat), res.Retried, P(res.Lat, 0.5), P(res.Lat, 0.99), res.CPUPerTurn)
}

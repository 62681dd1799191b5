package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/tools/tool"
)

// TestExecuteCommandLimitIsAnError: a command that hits a resource limit
// (a 3 MiB file under a 1 MiB file size limit) leaves no more than the
// limit on disk, and the model gets an error that names the limit and the
// key to raise it, not a bare "File size limit exceeded".
func TestExecuteCommandLimitIsAnError(t *testing.T) {
	for _, mode := range []sandbox.Mode{sandbox.ModeBubblewrap, sandbox.ModeLandlock} {
		t.Run(string(mode), func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			l := sandbox.New(sandbox.Options{Mode: mode, Root: root, Limits: sandbox.Limits{FileSize: 1 << 20}})
			if st := l.Status(); st.Refuse {
				t.Skipf("%s unavailable: %s", mode, st)
			}
			tl := NewExecuteCommand(ExecuteCommandOptions{Launcher: l})
			res, err := tl.Run(t.Context(), &tool.Env{Root: root, Mode: "edit"},
				mustJSON(t, map[string]any{"command": "head -c 3145728 /dev/zero > sub/big.bin"}))
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(filepath.Join(root, "sub", "big.bin"))
			if err != nil {
				t.Fatalf("nothing was written (the test proves nothing): %v\n%s", err, res.Output)
			}
			if fi.Size() > 1<<20 {
				t.Errorf("%d bytes written past the 1 MiB limit", fi.Size())
			}
			if !res.IsError || !strings.Contains(res.Output, sandbox.LimitsKey+".file_size") {
				t.Errorf("the limit is not a clear error (IsError %v):\n%s", res.IsError, res.Output)
			}
		})
	}
}

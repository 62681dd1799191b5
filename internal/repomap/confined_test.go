package repomap

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/internal/helperproc"
	"github.com/odin-code/odin/internal/sandbox"
)

// TestSitterNeverRunsPlainly is the attack "get the parser of untrusted
// files run outside the sandbox": odin-sitter is replaced by a program
// that writes a canary file outside anything a helper may write. Started
// without a launcher (a sandbox of its own) it cannot write it; where no
// sandbox works it is refused and never runs. The control, sandbox off
// (the user's own choice), shows the canary appears when it runs plainly.
func TestSitterNeverRunsPlainly(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	noLandlock := func() sandbox.LandlockStatus { return sandbox.LandlockStatus{Reason: "simulated: no Landlock"} }
	tests := []struct {
		name    string
		launch  func(t *testing.T) Launch
		refused bool
		written bool
	}{
		{"no launcher", func(*testing.T) Launch { return nil }, false, false},
		{"no sandbox works", func(t *testing.T) Launch {
			return Launch(helperproc.Sandboxed(sandbox.New(sandbox.Options{Root: t.TempDir(), Bwrap: "/nonexistent/bwrap",
				ProbeLandlock: noLandlock}), sandbox.Spec{}))
		}, true, false},
		{"control: sandbox off", func(t *testing.T) Launch {
			return Launch(helperproc.Sandboxed(sandbox.New(sandbox.Options{Mode: sandbox.ModeOff, Root: t.TempDir()}), sandbox.Spec{}))
		}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			canary := filepath.Join(dir, "canary")
			fake := filepath.Join(dir, "odin-sitter")
			if err := os.WriteFile(fake, []byte("#!"+sh+"\necho escaped > "+canary+"\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("ODIN_SITTER", fake)
			l := newLanguages(tt.launch(t))
			_, _, err := l.parse("python", []byte("def f():\n    pass\n"))
			l.close()
			t.Logf("parse: %v", err)
			if err == nil {
				t.Fatal("the fake parser parsed")
			}
			if refused := errors.Is(err, sandbox.ErrNoSandbox); refused != tt.refused {
				t.Errorf("refused = %v, want %v: %v", refused, tt.refused, err)
			}
			_, statErr := os.Stat(canary)
			if written := statErr == nil; written != tt.written {
				t.Errorf("canary written = %v, want %v", written, tt.written)
			}
		})
	}
}

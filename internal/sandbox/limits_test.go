package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The resource limits (permissions.sandbox_limits) against the commands
// they are for: a disk filler, a memory hog, a CPU burner, a fork bomb and
// a /tmp filler. Each is graded by what the command managed to do — the
// bytes on disk, a canary written after the allocation, the processes
// that started — and each has a control without the limit that shows the
// attack succeeding, so the test can fail.

// limitedRun runs script in a fresh project under mode with limits and
// returns its output, its shell-style exit code and the note the launcher
// gives for it.
func limitedRun(t *testing.T, mode Mode, lim Limits, script string) (p project, out string, code int, note string) {
	t.Helper()
	p = newProject(t)
	l := New(Options{Mode: mode, Root: p.root, Protected: []string{p.state}, CacheDir: CacheDirFor(p.state, p.root),
		Environ: baseEnv, Limits: lim})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	proc, err := l.Command(ctx, Spec{Args: []string{"bash", "-c", script}, Write: true})
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	defer proc.Release()
	var b bytes.Buffer
	proc.Stdout, proc.Stderr = &b, &b
	code = shellCode(proc.Run())
	return p, b.String(), code, l.LimitNote(b.String(), code)
}

// shellCode is the exit status as a shell reports it (128+N for signal N).
func shellCode(err error) int {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if err != nil {
			return -1
		}
		return 0
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// TestLimitFileSize: a command writing a 3 MiB file under a 1 MiB limit
// leaves at most 1 MiB on disk, and the model is told which limit. It
// tries to lift the limit first: the hard limit is the limit, and the
// command has no CAP_SYS_RESOURCE to raise it (root's is dropped under
// Landlock too).
func TestLimitFileSize(t *testing.T) {
	const limit = 1 << 20
	for _, mode := range append(kinds(t), ModeOff) {
		for _, control := range []bool{false, true} {
			// Unconfined, root keeps CAP_SYS_RESOURCE and lifts the limit:
			// sandbox off runs only the control.
			if control != (mode == ModeOff) {
				continue
			}
			name := string(mode)
			lim := Limits{FileSize: limit}
			if control {
				name, lim = name+"-control", Limits{}
			}
			t.Run(name, func(t *testing.T) {
				p, out, code, note := limitedRun(t, mode, lim, `ulimit -f unlimited; ulimit -H -f unlimited; head -c 3145728 /dev/zero > src/big.bin; echo "head: $?"`)
				fi, err := os.Stat(filepath.Join(p.root, "src", "big.bin"))
				if err != nil {
					t.Fatalf("the command wrote nothing (the test proves nothing): %v\n%s", err, out)
				}
				if control {
					if fi.Size() != 3<<20 {
						t.Errorf("without a limit the file has %d bytes, not 3 MiB", fi.Size())
					}
					return
				}
				if fi.Size() > limit {
					t.Errorf("a file of %d bytes was written past the %d-byte limit:\n%s", fi.Size(), limit, out)
				}
				if !strings.Contains(note, LimitsKey+".file_size") {
					t.Errorf("no note names the file size limit (exit %d): %q\n%s", code, note, out)
				}
			})
		}
	}
}

// TestLimitMemory: a process allocating 512 MiB under a 128 MiB limit
// fails before it can go on (its canary, written after the allocation,
// never appears).
func TestLimitMemory(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	const hog = `python3 -c 'b = bytearray(512 << 20); b[-1] = 1; open("src/mem-canary", "w").write("allocated")'`
	for _, mode := range append(kinds(t), "control") {
		t.Run(string(mode), func(t *testing.T) {
			lim := Limits{Memory: 128 << 20}
			if mode == "control" {
				mode, lim = ModeOff, Limits{}
			}
			p, out, code, note := limitedRun(t, mode, lim, hog)
			_, err := os.Stat(filepath.Join(p.root, "src", "mem-canary"))
			if lim.Memory == 0 {
				if err != nil {
					t.Errorf("without a limit the allocation failed (the test proves nothing): %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Errorf("a process allocated 512 MiB under a 128 MiB limit:\n%s", out)
			}
			if !strings.Contains(note, LimitsKey+".memory") {
				t.Errorf("no note names the memory limit (exit %d): %q\n%s", code, note, out)
			}
		})
	}
}

// TestLimitCPUTime: a busy loop under a one-second CPU limit is stopped
// by SIGXCPU (the command's own timeout would be the only end otherwise).
func TestLimitCPUTime(t *testing.T) {
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p, out, code, note := limitedRun(t, mode, Limits{CPUTime: time.Second}, `while :; do :; done; touch src/cpu-canary`)
			if code != 128+int(syscall.SIGXCPU) {
				t.Errorf("the busy loop ended with %d, not SIGXCPU:\n%s", code, out)
			}
			if _, err := os.Stat(filepath.Join(p.root, "src", "cpu-canary")); err == nil {
				t.Error("the command went on past its CPU limit")
			}
			if !strings.Contains(note, LimitsKey+".cpu_time") {
				t.Errorf("no note names the CPU limit: %q", note)
			}
		})
	}
}

// TestLimitTmpSize: bubblewrap's private /tmp is memory; a command
// filling it stops at tmp_size.
func TestLimitTmpSize(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip(why)
	}
	if !bwrapHasSize("bwrap") {
		t.Skip("this bwrap has no --size")
	}
	for _, lim := range []Limits{{TmpSize: 1 << 20}, {}} {
		t.Run(fmt.Sprint(lim.TmpSize), func(t *testing.T) {
			_, out, code, note := limitedRun(t, ModeBubblewrap, lim, `head -c 3145728 /dev/zero > /tmp/fill; r=$?; stat -c 'size=%s' /tmp/fill; exit $r`)
			got := -1
			if i := strings.Index(out, "size="); i >= 0 {
				got, _ = strconv.Atoi(strings.Fields(out[i+5:])[0])
			}
			if lim.TmpSize == 0 {
				if got != 3<<20 {
					t.Errorf("without a limit /tmp took %d bytes, not 3 MiB (the test proves nothing):\n%s", got, out)
				}
				return
			}
			if got < 0 || got > 1<<20 {
				t.Errorf("/tmp took %d bytes past its 1 MiB size:\n%s", got, out)
			}
			if !strings.Contains(note, LimitsKey+".tmp_size") {
				t.Errorf("no note names the /tmp size (exit %d): %q\n%s", code, note, out)
			}
		})
	}
}

// forkSpam forks 300 processes that all live at once (bash would retry a
// failed fork until earlier children end); each leaves a line in started.
const forkSpam = `python3 - <<'EOF'
import os, sys, time
n = 0
for i in range(300):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork failed after", n, "children:", e)
        sys.exit(1)
    if pid == 0:
        with open("w/started", "a") as f:
            f.write("x\n")
        time.sleep(2)
        os._exit(0)
    n += 1
for i in range(n):
    os.wait()
EOF`

// TestLimitProcesses: a fork bomb stops at the process limit, and Odin
// (which shares the user with it) can still start processes afterwards.
// The kernel never limits root's processes: as root, Odin is played by
// nobody.
func TestLimitProcesses(t *testing.T) {
	exe := nobodyExe(t)
	for _, mode := range append(kinds(t), "control") {
		t.Run(string(mode), func(t *testing.T) {
			limit := 50
			if mode == "control" {
				mode, limit = ModeLandlock, 0
				if !Probe().Available {
					mode = ModeOff
				}
			}
			root, err := os.MkdirTemp("", "odin-nproc-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(root) })
			// Landlock cannot let a command create files at the top of
			// the root: they go into w/.
			for _, d := range []string{root, filepath.Join(root, "w")} {
				if err := os.MkdirAll(d, 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(d, 0o777); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), "ODIN_SANDBOX_TEST_NPROC="+string(mode), "ODIN_SANDBOX_TEST_ROOT="+root,
				"ODIN_SANDBOX_TEST_LIMIT="+strconv.Itoa(limit))
			if os.Geteuid() == 0 {
				cmd.SysProcAttr, cmd.Dir = nobody, "/"
			}
			out, err := cmd.CombinedOutput()
			data, _ := os.ReadFile(filepath.Join(root, "w", "started"))
			started := bytes.Count(data, []byte("\n"))
			if limit == 0 {
				if started != 300 {
					t.Errorf("without a limit %d of 300 processes started (the test proves nothing):\n%s", started, out)
				}
				return
			}
			t.Logf("%d of 300 started under a limit of %d:\n%s", started, limit, out)
			if started == 0 || started > limit {
				t.Errorf("%d processes started under a limit of %d:\n%s", started, limit, out)
			}
			if err != nil || !strings.Contains(string(out), "odin survived") {
				t.Errorf("Odin did not survive the fork bomb (%v):\n%s", err, out)
			}
			if !strings.Contains(string(out), "note: ") || !strings.Contains(string(out), LimitsKey+".processes") {
				t.Errorf("no note names the process limit:\n%s", out)
			}
		})
	}
}

// actAsForkBombedOdin plays Odin for TestLimitProcesses: it runs the fork
// spam with the limit, says what the model would be told, and then
// starts a process of its own.
func actAsForkBombedOdin(mode Mode, root string, limit int) int {
	l := New(Options{Mode: mode, Root: root, Environ: func() []string {
		return []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	}, Limits: Limits{Processes: limit}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := l.Command(ctx, Spec{Args: []string{"bash", "-c", forkSpam}, Write: true})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer p.Release()
	var out bytes.Buffer
	p.Stdout, p.Stderr = &out, &out
	code := shellCode(p.Run())
	fmt.Printf("%s\nexit %d\nnote: %s\n", out.String(), code, l.LimitNote(out.String(), code))
	if err := exec.Command("true").Run(); err != nil {
		fmt.Println("odin cannot start a process:", err)
		return 1
	}
	fmt.Println("odin survived")
	return 0
}

// TestLimitsSurviveReroot: an isolated agent's launcher (WithRoot, its
// worktree) keeps every limit, the private /tmp's size included.
func TestLimitsSurviveReroot(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip(why)
	}
	if !bwrapHasSize("bwrap") {
		t.Skip("this bwrap has no --size")
	}
	lim := Limits{Processes: 100, TmpSize: 1 << 20}
	l := New(Options{Mode: ModeBubblewrap, Root: t.TempDir(), Limits: lim}).WithRoot(t.TempDir())
	p, err := l.Plan(Spec{Args: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.BwrapArgs, "--size") || p.Limits == nil || p.Limits.Processes != 100 {
		t.Errorf("the rerooted launcher lost its limits: %q %+v", p.BwrapArgs, p.Limits)
	}
}

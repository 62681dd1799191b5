package sandbox

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/odin-code/odin/internal/sandbox/attacktest"
)

// TestAttackOtherProcesses: the user's other processes hold secrets in
// their environment (a shell that exported a token) and on their command
// lines (a client given a password), and the host's unix sockets carry
// revealing names in /proc/net/unix. bubblewrap's PID and network
// namespaces keep all of them out of a command's /proc; the Landlock
// fallback keeps the command out of every /proc/PID (its own included)
// and so out of /proc/net. Unconfined, the same attack reads all three,
// which shows the test can fail.
func TestAttackOtherProcesses(t *testing.T) {
	bait := attacktest.UserProcess(t)
	script := fmt.Sprintf(`for d in /proc/[0-9]* /proc/self /proc/%d; do
  cat "$d/environ" "$d/cmdline" "$d/status" "$d/net/unix" 2>&1 | tr '\0' '\n'
done
cat /proc/net/unix /proc/self/net/unix 2>&1
python3 -c 'import glob
for p in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline"):
    try: print(open(p, "rb").read())
    except OSError as e: print(e)' 2>&1
echo attack-done`, bait.PID)
	for _, mode := range append(kinds(t), ModeOff) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			out, err := run(t, p.launcher(mode, baseEnv()), false, script)
			if err != nil || !strings.Contains(out, "attack-done") {
				t.Fatalf("the attack did not run to its end (%v):\n%s", err, out)
			}
			for what, secret := range map[string]string{"environment": bait.Env, "command line": bait.Arg, "socket": bait.Socket} {
				got := strings.Contains(out, secret)
				if mode == ModeOff && !got {
					t.Errorf("control: unconfined, the attack did not read the user's process's %s; it proves nothing", what)
				}
				if mode != ModeOff && got {
					t.Errorf("a sandboxed command read the %s of a process outside the sandbox", what)
				}
			}
		})
	}
}

// TestLandlockPrivateProcOrdinaryWork: kept out of /proc/PID, a command
// under Landlock still does its ordinary work: the machine's /proc files
// (CPUs, memory, sysctls), /dev/stdin and bash's process substitution
// (which lead through /proc/self/fd to a pipe), interpreters, and a Go
// build and test run, the race detector's included.
func TestLandlockPrivateProcOrdinaryWork(t *testing.T) {
	if !Probe().Available {
		t.Skip("Landlock unavailable: " + Probe().Reason)
	}
	p := newProject(t)
	write(t, filepath.Join(p.root, "src", "go.mod"), "module example.com/x\n\ngo 1.22\n")
	write(t, filepath.Join(p.root, "src", "x.go"), "package x\n\nfunc Add(a, b int) int { return a + b }\n")
	write(t, filepath.Join(p.root, "src", "x_test.go"), "package x\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n")
	checks := map[string]string{
		"nproc && head -1 /proc/meminfo && cat /proc/sys/kernel/pid_max": "MemTotal",
		"echo via-stdin | cat /dev/stdin":                                "via-stdin",
		"cat <(echo via-substitution)":                                   "via-substitution",
		`python3 -c 'import os, subprocess; print("py", os.cpu_count(), subprocess.run(["echo", "child"], capture_output=True).stdout.decode())'`: "child",
	}
	if _, err := exec.LookPath("go"); err == nil {
		checks["cd src && go vet -buildvcs=false ./... && go test -buildvcs=false -race -count=1 ./... 2>&1"] = "ok  \texample.com/x"
	}
	if _, err := exec.LookPath("node"); err == nil {
		checks[`node -e 'console.log("node", require("os").cpus().length > 0)'`] = "node true"
	}
	l := p.launcher(ModeLandlock, baseEnv())
	for script, want := range checks {
		out, err := run(t, l, true, script)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("%s: %v\n%s", script, err, out)
		}
	}
}

// TestPrivateProcEveryProcess: under Landlock no process keeps
// /proc/PID, whatever Odin's own code asks for: ShellSession's shell and
// Python (a loopback relay, the model's commands), an MCP server with the
// full network. ShellSession's timeout is kept by Odin
// (Process.SignalForeground), not by a watchdog reading /proc.
func TestPrivateProcEveryProcess(t *testing.T) {
	l := New(Options{Mode: ModeLandlock, Root: t.TempDir(), ProbeLandlock: func() LandlockStatus { return LandlockStatus{Available: true, ABI: 6} }})
	for _, spec := range []Spec{
		{Args: []string{"bash"}},
		{Args: []string{"bash", "--noprofile", "--norc", "-s"}, Write: true, LoopbackRelay: true},
		{Args: []string{"server"}, Network: NetworkFull, Confined: true},
	} {
		p, err := l.Plan(spec)
		if err != nil {
			t.Fatal(err)
		}
		if p.Landlock == nil || !p.Landlock.PrivateProc {
			t.Errorf("%+v: rules %+v", spec, p.Landlock)
		}
	}
}

// BenchmarkPrivateProcRules: what PrivateProc adds to each Landlock
// launch in the init: listing /proc and one rule per machine-wide entry.
func BenchmarkPrivateProcRules(b *testing.B) {
	if !Probe().Available {
		b.Skip("Landlock unavailable: " + Probe().Reason)
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: unix.LANDLOCK_ACCESS_FS_READ_FILE}
	for b.Loop() {
		fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr.Handled_access_fs), 0)
		if errno != 0 {
			b.Fatal(errno)
		}
		shared := procShared()
		for _, p := range shared {
			if err := addRule(int(fd), p, unix.LANDLOCK_ACCESS_FS_READ_FILE, unix.LANDLOCK_ACCESS_FS_READ_FILE); err != nil {
				b.Fatal(err)
			}
		}
		unix.Close(int(fd))
		b.ReportMetric(float64(len(shared)), "rules")
	}
}

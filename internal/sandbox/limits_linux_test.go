package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func BenchmarkUserTasks(b *testing.B) {
	for b.Loop() {
		userTasks(os.Getuid())
	}
}

func TestUserTasksCountsThreads(t *testing.T) {
	// This test process alone runs several threads (the Go runtime).
	if n := userTasks(os.Getuid()); n < 2 {
		t.Errorf("userTasks = %d", n)
	}
	if n := threadsOf("self"); n < 2 {
		t.Errorf("threadsOf(self) = %d", n)
	}
}

// TestOdinReadsItsOwnProc: Odin turns non-dumpable in Main, which makes
// its /proc/PID entries root's. It must still read its own (odin serve's
// metrics list /proc/self/fd and read /proc/self/statm; os.Executable
// reads /proc/self/exe), and ODIN_DUMPABLE=1 keeps it dumpable for a
// debugger. Run as nobody when the test runs as root, where root's
// capabilities would read anything.
func TestOdinReadsItsOwnProc(t *testing.T) {
	exe := nobodyExe(t)
	for _, keep := range []bool{false, true} {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "ODIN_SANDBOX_TEST_SELFPROC=1")
		if keep {
			cmd.Env = append(cmd.Env, dumpableEnv+"=1")
		}
		if os.Geteuid() == 0 {
			cmd.SysProcAttr, cmd.Dir = nobody, "/"
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		want := "dumpable 0\nfd ok\nstatm ok\nexe ok\nstatus ok\n"
		if keep {
			want = strings.Replace(want, "dumpable 0", "dumpable 1", 1)
		}
		if string(out) != want {
			t.Errorf("ODIN_DUMPABLE=%v: got\n%s\nwant\n%s", keep, out, want)
		}
	}
}

// The child of TestOdinReadsItsOwnProc runs Main, as Odin's main does,
// and reports.
func init() {
	if os.Getenv("ODIN_SANDBOX_TEST_SELFPROC") != "" {
		Main()
		os.Exit(reportOwnProc())
	}
}

// reportOwnProc reads the process's own /proc entries.
func reportOwnProc() int {
	d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	fmt.Printf("dumpable %d\n", d)
	check := func(name string, err error) {
		if err != nil {
			fmt.Printf("%s: %v\n", name, err)
			return
		}
		fmt.Printf("%s ok\n", name)
	}
	_, err := os.ReadDir("/proc/self/fd")
	check("fd", err)
	_, err = os.ReadFile("/proc/self/statm")
	check("statm", err)
	_, err = os.Executable()
	check("exe", err)
	_, err = os.ReadFile("/proc/self/status")
	check("status", err)
	return 0
}

// TestLimitsByBlockFromFirstInstruction: under bubblewrap without the
// init, Odin sets the limits on bwrap's child before it execs the
// command, so the command's own first look at them (bash's ulimit, run
// before anything else of the script) finds them set, hard and soft;
// a command handed off to another program (Handoff) gets them as well.
func TestLimitsByBlockFromFirstInstruction(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip("bubblewrap unusable here: " + why)
	}
	pr := newProject(t)
	lim := Limits{Processes: 777, Memory: 3 << 30, FileSize: 5 << 20}
	l := New(Options{Mode: ModeBubblewrap, Root: pr.root, Protected: []string{pr.state}, CacheDir: CacheDirFor(pr.state, pr.root),
		Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH")} }, Limits: lim})
	spec := Spec{Args: []string{"bash", "-c", `echo "data=$(ulimit -d)/$(ulimit -Hd) fsize=$(ulimit -f)/$(ulimit -Hf) nproc=$(ulimit -u)/$(ulimit -Hu) pid=$$"`}}
	plan, err := l.Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.LimitsByBlock() {
		t.Fatalf("the limits still go through the init: %+v", plan)
	}
	// bash's ulimit counts data and file sizes in KiB; the process limit
	// is the tasks already in the sandbox's user namespace (the command
	// itself) plus Processes.
	want := fmt.Sprintf("data=%d/%d fsize=%d/%d nproc=778/778 pid=1", 3<<20, 3<<20, 5<<10, 5<<10)
	out, err := run(t, l, false, spec.Args[2])
	if err != nil || strings.TrimSpace(out) != want {
		t.Errorf("the command's limits: %v\n%s\nwant %s", err, out, want)
	}
	p, err := l.Command(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	argv, remove, err := p.Handoff(filepath.Join(pr.state, "handoff"))
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = "/"
	hout, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(hout)) != want {
		t.Errorf("the handed-off command's limits: %v\n%s\nwant %s", err, hout, want)
	}
}

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalForegroundAndKillTrees: Odin, from outside the sandbox,
// interrupts a confined shell's foreground pipeline (every stage, through
// a PID namespace under bubblewrap) without touching the shell or its
// background job, and KillTrees stops a job with the child it started.
// The shell reads no /proc for any of it (under Landlock it could not).
func TestSignalForegroundAndKillTrees(t *testing.T) {
	id := fmt.Sprintf("%d", time.Now().UnixNano()%1000000)
	bg, fg1, fg2, job, jobChild := "331."+id, "332."+id, "333."+id, "334."+id, "335."+id
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			proc, err := p.launcher(mode, baseEnv()).Command(t.Context(), Spec{Args: []string{"bash", "--noprofile", "--norc", "-s"}, Write: true, LoopbackRelay: true})
			if err != nil {
				t.Fatal(err)
			}
			defer proc.Release()
			stdin, err := proc.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := proc.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = proc.Kill(); _ = proc.Wait() }()
			lines := bufio.NewScanner(stdout)
			expect := func(prefix string) string {
				t.Helper()
				for lines.Scan() {
					if v, ok := strings.CutPrefix(lines.Text(), prefix); ok {
						return v
					}
				}
				t.Fatalf("the shell ended before printing %q", prefix)
				return ""
			}
			say := func(script string) {
				t.Helper()
				if _, err := io.WriteString(stdin, script); err != nil {
					t.Fatal(err)
				}
			}
			say(fmt.Sprintf("trap : INT\necho pid $$\nsleep %s &\ncat /proc/$!/cmdline >/dev/null 2>&1; echo proc=$?\nsleep %s | sleep %s\necho interrupted\n", bg, fg1, fg2))
			shell, _ := strconv.Atoi(expect("pid "))
			if mode == ModeLandlock && expect("proc=") == "0" {
				t.Error("the shell read its background job's /proc/PID under Landlock")
			}
			waitSleepers(t, fg1, fg2)
			if _, err := proc.SignalForeground(shell+100000, syscall.SIGINT); !errors.Is(err, ErrNoShell) {
				t.Errorf("a PID that is not the shell's: %v, want ErrNoShell", err)
			}
			n, err := proc.SignalForeground(shell, syscall.SIGINT)
			if err != nil || n != 2 {
				t.Errorf("SignalForeground signalled %d processes (%v), want the 2 of the pipeline", n, err)
			}
			expect("interrupted")
			if pids := sleepers(fg1); len(pids) > 0 {
				t.Errorf("the foreground pipeline survived: %v", pids)
			}
			if len(sleepers(bg)) != 1 {
				t.Error("the background job was interrupted too")
			}
			say(fmt.Sprintf("bash -c 'sleep %s & sleep %s; :' &\necho job $!\n", jobChild, job))
			jobPid, _ := strconv.Atoi(expect("job "))
			waitSleepers(t, job, jobChild)
			if killed := proc.KillTrees([]int{jobPid}, time.Second); len(killed) != 3 {
				t.Errorf("KillTrees stopped %v, want the job, its sleep and the sleep's sibling", killed)
			}
			for _, m := range []string{job, jobChild} {
				if pids := sleepers(m); len(pids) > 0 {
					t.Errorf("sleep %s survived KillTrees: %v", m, pids)
				}
			}
			// What a command can make the shell report: the sandbox's
			// init, Odin's own group, every process of the user's.
			if killed := proc.KillTrees([]int{1, 0, -1}, 0); len(killed) != 0 {
				t.Errorf("KillTrees signalled %v for PIDs 1, 0 and -1, want none", killed)
			}
			say("echo alive $$\n")
			if got := expect("alive "); got != strconv.Itoa(shell) {
				t.Errorf("the shell did not survive: %q", got)
			}
			if len(sleepers(bg)) != 1 {
				t.Error("KillTrees stopped another job")
			}
		})
	}
}

// waitSleepers waits until a `sleep marker` runs for each marker.
func waitSleepers(t *testing.T, markers ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, m := range markers {
		for len(sleepers(m)) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("sleep %s never started", m)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestSignalScannedOnlyTheScannedProcess: Odin signals from outside the
// sandbox, so a process that took a scanned PID after the scan (its start
// time differs) must get nothing.
func TestSignalScannedOnlyTheScannedProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pi, ok := readStat(cmd.Process.Pid)
	if !ok || pi.start == 0 {
		t.Fatalf("readStat(%d) = %+v, %v; want the process with its start time", cmd.Process.Pid, pi, ok)
	}
	other := pi
	other.start++ // the PID's holder as if it had been reused
	if signalScanned(other, syscall.SIGKILL) {
		t.Fatal("a process that started at another time than the scanned one was signalled")
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the process is gone after a refused signal: %v", err)
	}
	if !signalScanned(pi, syscall.SIGKILL) {
		t.Fatal("the scanned process itself was not signalled")
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("after the signal: %v, want the process killed", err)
	}
}

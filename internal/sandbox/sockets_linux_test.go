package sandbox

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestSocketFilterProgram runs the assembled filter in x/net/bpf's VM over
// hand-built struct seccomp_data records. The VM loads words big-endian
// where seccomp loads them native-endian, so the records are written
// big-endian here: the program's offsets and constants are what is tested.
func TestSocketFilterProgram(t *testing.T) {
	amd64 := &seccompArch{audit: unix.AUDIT_ARCH_X86_64, x32: 0x40000000, socket: 41, ioUringSetup: 425, pidfdGetfd: 438, ioctl: 16}
	const socketpair, connect = 53, 42
	data := func(arch, nr, arg0 uint32) []byte {
		b := make([]byte, 64)
		binary.BigEndian.PutUint32(b[seccompDataNR:], nr)
		binary.BigEndian.PutUint32(b[seccompDataArch:], arch)
		binary.BigEndian.PutUint32(b[seccompDataArg0:], arg0)
		return b
	}
	socket := func(domain, typ, proto uint32) []byte {
		b := data(amd64.audit, amd64.socket, domain)
		binary.BigEndian.PutUint32(b[seccompDataArg1:], typ)
		binary.BigEndian.PutUint32(b[seccompDataArg2:], proto)
		return b
	}
	type filterCase struct {
		name               string
		allowUnix, tcpOnly bool
		in                 []byte
		want               uint32
	}
	cases := []filterCase{
		{"socket AF_UNIX", false, false, data(amd64.audit, amd64.socket, unix.AF_UNIX), retEPERM},
		{"socket AF_INET", false, false, data(amd64.audit, amd64.socket, unix.AF_INET), retAllow},
		{"socket AF_INET6", false, false, data(amd64.audit, amd64.socket, unix.AF_INET6), retAllow},
		{"socketpair AF_UNIX", false, false, data(amd64.audit, socketpair, unix.AF_UNIX), retAllow},
		{"connect", false, false, data(amd64.audit, connect, 3), retAllow},
		{"io_uring_setup", false, false, data(amd64.audit, amd64.ioUringSetup, 8), retEPERM},
		{"pidfd_getfd", false, false, data(amd64.audit, amd64.pidfdGetfd, 3), retEPERM},
		{"x32 socket", false, false, data(amd64.audit, amd64.x32|amd64.socket, unix.AF_UNIX), retKill},
		{"i386 ABI", false, false, data(unix.AUDIT_ARCH_I386, 102, 1), retKill},
		{"allowed: socket AF_UNIX", true, false, data(amd64.audit, amd64.socket, unix.AF_UNIX), retAllow},
		{"allowed: io_uring_setup", true, false, data(amd64.audit, amd64.ioUringSetup, 8), retEPERM},
		{"allowed: i386 ABI", true, false, data(unix.AUDIT_ARCH_I386, 102, 1), retKill},
	}
	cases = append(cases, []filterCase{
		{"tcp only: TCP", false, true, socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0), retAllow},
		{"tcp only: TCP6", false, true, socket(unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP), retAllow},
		{"tcp only: UDP", false, true, socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0), retEPERM},
		{"tcp only: UDP6", false, true, socket(unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDP), retEPERM},
		{"tcp only: ICMP", false, true, socket(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP), retEPERM},
		{"tcp only: SCTP", false, true, socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP), retEPERM},
		{"tcp only: raw", false, true, socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW), retEPERM},
		{"tcp only: packet", false, true, socket(unix.AF_PACKET, unix.SOCK_RAW, 0), retEPERM},
		{"tcp only: vsock", false, true, socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0), retEPERM},
		{"tcp only: netlink", false, true, socket(unix.AF_NETLINK, unix.SOCK_RAW, 0), retAllow},
		{"tcp only: unix", false, true, socket(unix.AF_UNIX, unix.SOCK_STREAM, 0), retEPERM},
		{"tcp only, allowed: unix", true, true, socket(unix.AF_UNIX, unix.SOCK_STREAM, 0), retAllow},
		{"tcp only, allowed: UDP", true, true, socket(unix.AF_INET, unix.SOCK_DGRAM, 0), retEPERM},
		{"tcp only: io_uring_setup", false, true, data(amd64.audit, amd64.ioUringSetup, 8), retEPERM},
	}...)
	ioctl := func(req uint32) []byte {
		b := data(amd64.audit, amd64.ioctl, 0)
		binary.BigEndian.PutUint32(b[seccompDataArg1:], req)
		return b
	}
	for _, rule := range []socketRule{{}, {allowUnix: true}, {tcpOnly: true}, {allowUnix: true, tcpOnly: true}} {
		cases = append(cases, []filterCase{
			{"ioctl TIOCSTI", rule.allowUnix, rule.tcpOnly, ioctl(unix.TIOCSTI), retEPERM},
			{"ioctl TIOCLINUX", rule.allowUnix, rule.tcpOnly, ioctl(unix.TIOCLINUX), retEPERM},
			{"ioctl TCGETS", rule.allowUnix, rule.tcpOnly, ioctl(unix.TCGETS), retAllow},
			{"ioctl TIOCGWINSZ", rule.allowUnix, rule.tcpOnly, ioctl(unix.TIOCGWINSZ), retAllow},
			{"socket AF_INET after ioctl's check", rule.allowUnix, rule.tcpOnly, socket(unix.AF_INET, unix.SOCK_STREAM, 0), retAllow},
			{"read", rule.allowUnix, rule.tcpOnly, data(amd64.audit, 0, 0), retAllow},
		}...)
	}
	if runtime.GOARCH == "amd64" && *nativeArch != *amd64 {
		t.Errorf("the filter's table for amd64 is %+v, want %+v", *nativeArch, *amd64)
	}
	for _, c := range cases {
		raw, err := socketFilter(amd64, socketRule{allowUnix: c.allowUnix, tcpOnly: c.tcpOnly})
		if err != nil {
			t.Fatal(err)
		}
		ins, ok := bpf.Disassemble(raw)
		if !ok {
			t.Fatalf("%s: the program does not disassemble", c.name)
		}
		vm, err := bpf.NewVM(ins)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := vm.Run(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if uint32(got) != c.want {
			t.Errorf("%s: returned %#x, want %#x", c.name, got, c.want)
		}
	}
}

// canaryServer is an unconfined unix-socket server standing for tmux,
// the session bus or docker: any connection makes it write a canary file
// outside the sandbox, the side effect the attack wants.
type canaryServer struct {
	addr, canary string
	hits         atomic.Int32
}

func listenCanary(t *testing.T, addr, canary string) *canaryServer {
	t.Helper()
	ln, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	s := &canaryServer{addr: addr, canary: canary}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.hits.Add(1)
			_ = os.WriteFile(canary, []byte("written by an unconfined server\n"), 0o644)
			c.Close()
		}
	}()
	return s
}

func (s *canaryServer) reached() bool {
	_, err := os.Stat(s.canary)
	return err == nil || s.hits.Load() > 0
}

// connectScript tries every address with python3 and prints one line per
// address: "connected" or the error.
func connectScript(addrs ...string) string {
	var quoted []string
	for _, a := range addrs {
		if strings.HasPrefix(a, "@") {
			quoted = append(quoted, fmt.Sprintf("'\\0%s'", a[1:]))
		} else {
			quoted = append(quoted, fmt.Sprintf("'%s'", a))
		}
	}
	return `python3 -c '
import socket, sys
for a in [` + strings.ReplaceAll(strings.Join(quoted, ", "), "'", `"`) + `]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(a)
        s.recv(1)
        print(repr(a), "connected")
    except OSError as e:
        print(repr(a), "failed:", e)
'`
}

// socketWorld is the attack's setting: a pathname socket in a directory
// the sandbox sees read-only, one under a fake $XDG_RUNTIME_DIR, and an
// abstract one, each with its canary in a directory outside the sandbox.
type socketWorld struct {
	visible, runtime, abstract *canaryServer
	runtimeDir                 string
	env                        []string
}

func newSocketWorld(t *testing.T) socketWorld {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed: no client for the socket attack")
	}
	// Outside /tmp, which bubblewrap replaces: the sockets must be
	// visible for the filter to be what stops the connection.
	base, err := os.MkdirTemp("/var/tmp", "odin-sockets-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	var w socketWorld
	canaries := filepath.Join(base, "canaries")
	w.runtimeDir = filepath.Join(base, "xdg-runtime")
	shared := filepath.Join(base, "shared")
	for _, d := range []string{canaries, w.runtimeDir, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.visible = listenCanary(t, filepath.Join(shared, "server.sock"), filepath.Join(canaries, "visible"))
	w.runtime = listenCanary(t, filepath.Join(w.runtimeDir, "tmux.sock"), filepath.Join(canaries, "runtime"))
	w.abstract = listenCanary(t, fmt.Sprintf("@odin-test-%d-%d", os.Getpid(), time.Now().UnixNano()), filepath.Join(canaries, "abstract"))
	w.env = append(baseEnv(), "XDG_RUNTIME_DIR="+w.runtimeDir)
	return w
}

func (w socketWorld) all() []*canaryServer { return []*canaryServer{w.visible, w.runtime, w.abstract} }

func (w socketWorld) addrs() []string {
	return []string{w.visible.addr, w.runtime.addr, w.abstract.addr}
}

// TestUnixSocketEscape: a command in ask mode, in either sandbox and with
// the network off, proxied or shared, connects to none of the unconfined
// servers: no canary appears.
func TestUnixSocketEscape(t *testing.T) {
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			w := newSocketWorld(t)
			p := newProject(t)
			for _, net := range []Network{NetworkProxy, NetworkFull} {
				for _, domains := range [][]string{nil, {"localhost"}} {
					l := New(Options{Mode: mode, Root: p.root, Environ: func() []string { return w.env }, Domains: domains})
					pr, err := l.Command(t.Context(), Spec{Args: []string{"bash", "-c", connectScript(w.addrs()...)}, Network: net})
					if err != nil {
						t.Fatal(err)
					}
					out, _ := pr.CombinedOutput()
					pr.Release()
					for _, s := range w.all() {
						if s.reached() {
							t.Errorf("network %d, domains %v: the sandboxed command reached %s:\n%s", net, domains, s.addr, out)
						}
					}
					if strings.Count(string(out), "failed:") != 3 {
						t.Errorf("network %d, domains %v: the client did not run as expected:\n%s", net, domains, out)
					}
				}
			}
		})
	}
}

// TestAllowedUnixSocket: a socket on the allow list is reachable (so the
// attack test above can fail), per agent too; in bubblewrap the runtime
// directory stays hidden around it, so the socket beside it is not.
func TestAllowedUnixSocket(t *testing.T) {
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			w := newSocketWorld(t)
			p := newProject(t)
			l := New(Options{Mode: mode, Root: p.root, Environ: func() []string { return w.env },
				AgentUnixSockets: map[string][]string{"docker": {w.runtime.addr}}})
			other := listenCanary(t, filepath.Join(w.runtimeDir, "other.sock"), w.runtime.canary+"-other")
			// Another agent is not widened.
			if out, _ := runAgent(t, l, "", connectScript(w.runtime.addr)); w.runtime.reached() {
				t.Fatalf("an agent without the socket reached it:\n%s", out)
			}
			out, _ := runAgent(t, l, "docker", connectScript(w.runtime.addr, other.addr, w.abstract.addr))
			if !w.runtime.reached() {
				t.Errorf("the allowed socket under $XDG_RUNTIME_DIR was not reachable:\n%s", out)
			}
			if mode == ModeBubblewrap && other.reached() {
				t.Errorf("a socket beside the allowed one was reachable:\n%s", out)
			}
			// Abstract sockets stay out: a new network namespace in
			// bubblewrap, the Landlock scope (ABI 6) in the fallback.
			if (mode == ModeBubblewrap || Probe().ABI >= landlockScopeABI) && w.abstract.reached() {
				t.Errorf("an abstract socket was reachable:\n%s", out)
			}
		})
	}
}

// TestProxyWithSocketFilter: in bubblewrap the init relays the proxy over
// a unix socket while the command it starts cannot open one.
func TestProxyWithSocketFilter(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip(why)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	w := newSocketWorld(t)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprint(rw, "hello from outside")
	}))
	defer srv.Close()
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	p := newProject(t)
	l := New(Options{Mode: ModeBubblewrap, Root: p.root, Environ: func() []string { return w.env }, Domains: []string{"localhost"}})
	out, err := runAgent(t, l, "", "curl -sS --max-time 5 --noproxy '' -x \"$HTTP_PROXY\" http://localhost:"+port+"/; echo; "+
		connectScript(w.addrs()...)+"; "+connectScript(innerProxy))
	if !strings.Contains(out, "hello from outside") {
		t.Errorf("the proxy does not work with the socket filter on: %v\n%s", err, out)
	}
	for _, s := range w.all() {
		if s.reached() {
			t.Errorf("the command reached %s:\n%s", s.addr, out)
		}
	}
	if strings.Contains(out, "connected") {
		t.Errorf("the command connected to a unix socket itself:\n%s", out)
	}
}

// TestRuntimeDirsHidden: bubblewrap shows an empty $XDG_RUNTIME_DIR and
// nothing of /run but what keptPaths binds back, and /etc/resolv.conf
// still reads as on the host.
func TestRuntimeDirsHidden(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip(why)
	}
	w := newSocketWorld(t)
	write(t, filepath.Join(w.runtimeDir, "token"), "runtime-secret-canary\n")
	// A PATH entry under a hidden directory (as NixOS has under /run)
	// stays usable.
	bin := filepath.Join(w.runtimeDir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "odin-kept-tool"), []byte("#!/bin/sh\necho kept-tool-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(w.env, "PATH="+bin+":"+os.Getenv("PATH"))
	p := newProject(t)
	l := New(Options{Mode: ModeBubblewrap, Root: p.root, Environ: func() []string { return env }})
	out, err := run(t, l, false, "odin-kept-tool; ls -A /run; echo =====; ls -A "+w.runtimeDir+"; cat "+filepath.Join(w.runtimeDir, "token")+
		"; echo =====; cat /etc/resolv.conf 2>/dev/null")
	parts := strings.SplitN(out, "=====\n", 3)
	if len(parts) != 3 {
		t.Fatalf("unexpected output (%v):\n%s", err, out)
	}
	tool, listing, _ := strings.Cut(parts[0], "\n")
	if tool != "kept-tool-ran" {
		t.Errorf("the PATH entry under $XDG_RUNTIME_DIR was not kept:\n%s", out)
	}
	parts[0] = listing
	kept := map[string]bool{}
	for _, k := range keptPaths(runtimeDirs(hostRunDirs, w.env), w.env) {
		if rel, err := filepath.Rel("/run", k[1]); err == nil && !strings.HasPrefix(rel, "..") {
			kept[strings.Split(rel, "/")[0]] = true
		}
	}
	for _, e := range strings.Fields(parts[0]) {
		if !kept[e] {
			t.Errorf("/run/%s is visible:\n%s", e, out)
		}
	}
	if listed, _, _ := strings.Cut(parts[1], "\n"); listed != "bin" || strings.Contains(parts[1], "runtime-secret-canary") {
		t.Errorf("$XDG_RUNTIME_DIR is visible:\n%s", out)
	}
	resolv, _ := os.ReadFile("/etc/resolv.conf")
	if parts[2] != string(resolv) {
		t.Errorf("/etc/resolv.conf reads %q inside, %q outside", parts[2], resolv)
	}
}

// TestLandlockSignalScope: in the Landlock fallback (ABI 6 and later) a
// command cannot signal a process outside the sandbox.
func TestLandlockSignalScope(t *testing.T) {
	if ll := Probe(); !ll.Available || ll.ABI < landlockScopeABI {
		t.Skipf("Landlock ABI %d has no signal scope", ll.ABI)
	}
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer victim.Process.Kill()
	p := newProject(t)
	out, err := run(t, p.launcher(ModeLandlock, baseEnv()), true, fmt.Sprintf("kill -KILL %d", victim.Process.Pid))
	if err == nil {
		t.Errorf("kill succeeded:\n%s", out)
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process outside the sandbox is gone: %v\n%s", err, out)
	}
}

// BenchmarkSocketRule is the socket rule's cost in Odin per bubblewrap
// command: the mount view's arguments and the compiled filter in a pipe
// (the mounts and the filter itself cost inside bwrap, in BenchmarkLaunch).
func BenchmarkSocketRule(b *testing.B) {
	env := os.Environ()
	for b.Loop() {
		_ = socketArgs(Spec{}, nil, hostRunDirs, env)
		r, _, err := filterPipe(false)
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// ioUringScript calls io_uring_setup through libc and prints "ring" or
// the error: a ring's IORING_OP_SOCKET would create a socket without
// socket(2), past the filter.
const ioUringScript = `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
r = libc.syscall(425, 4, params)
print("ring" if r >= 0 else "refused: " + os.strerror(ctypes.get_errno()))
'`

// TestIoUringRefused: io_uring_setup fails inside both sandboxes where it
// works outside.
func TestIoUringRefused(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("the script uses io_uring_setup's number on amd64 and arm64")
	}
	out, err := exec.Command("bash", "-c", ioUringScript).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ring") {
		t.Skipf("io_uring is unavailable outside the sandbox already: %v %s", err, out)
	}
	for _, mode := range kinds(t) {
		p := newProject(t)
		out, err := run(t, p.launcher(mode, baseEnv()), false, ioUringScript)
		if !strings.Contains(out, "refused: Operation not permitted") {
			t.Errorf("%s: io_uring_setup was not refused: %v\n%s", mode, err, out)
		}
	}
}

// ptraceScript attaches to PID 1 and the parent, and opens their memory
// for writing, unless that is itself: an unfiltered process there would
// run whatever the command wrote into it.
const ptraceScript = `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for pid in sorted({1, os.getppid()} - {os.getpid(), 0}):
    if libc.ptrace(16, pid, 0, 0) == 0:
        print("ATTACHED", pid)
        os.waitpid(pid, 0x40000000)  # __WALL: the attach stop, then let go
        libc.ptrace(17, pid, 0, 0)
    try:
        open("/proc/%d/mem" % pid, "r+b").close()
        print("MEM", pid)
    except OSError as e:
        print("no mem", pid, e)
print("checked")
'`

// TestNoUnfilteredAncestor: in bubblewrap, with and without the proxy
// relay, the command can neither ptrace nor write the memory of the
// processes above it in the sandbox (bwrap's reaper, Odin's init), which
// run without the socket filter.
func TestNoUnfilteredAncestor(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip(why)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	p := newProject(t)
	for _, domains := range [][]string{nil, {"localhost"}} {
		l := New(Options{Mode: ModeBubblewrap, Root: p.root, Environ: baseEnv, Domains: domains})
		out, _ := run(t, l, false, ptraceScript)
		if strings.Contains(out, "ATTACHED") || strings.Contains(out, "MEM") || !strings.Contains(out, "checked") {
			t.Errorf("domains %v: the command reached an unfiltered process:\n%s", domains, out)
		}
	}
}

// TestRuntimeDirs: /run once however /var/run is linked, $XDG_RUNTIME_DIR
// unless /run holds it already, never /tmp (private already) nor a
// directory holding the home directory.
func TestRuntimeDirs(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	var run []string
	if fi, err := os.Stat("/run"); err == nil && fi.IsDir() {
		real, _ := filepath.EvalSymlinks("/run")
		run = append(run, real)
	}
	for _, c := range []struct {
		name string
		env  []string
		want []string
	}{
		{"no XDG_RUNTIME_DIR", nil, run},
		{"under /run", []string{"XDG_RUNTIME_DIR=/run/user/1000"}, run},
		{"under /tmp", []string{"XDG_RUNTIME_DIR=" + base}, run},
		{"holding HOME", []string{"XDG_RUNTIME_DIR=/var/tmp", "HOME=/var/tmp/x"}, run},
		{"elsewhere", []string{"XDG_RUNTIME_DIR=/var/tmp", "HOME=" + home}, append(slices.Clone(run), "/var/tmp")},
	} {
		got := runtimeDirs(hostRunDirs, c.env)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: runtimeDirs = %v, want %v", c.name, got, c.want)
		}
	}
}

package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// relayServer is a python3 program that serves on 127.0.0.1:0 in the
// sandbox, prints its port, and answers every connection with a line.
const relayServer = `
import socket, sys, os
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
links = []
for f in sorted(int(f) for f in os.listdir("/proc/self/fd")):
    try:
        if f > 2 and f != s.fileno(): links.append(os.readlink("/proc/self/fd/%d" % f))
    except OSError: pass
print(s.getsockname()[1], " ".join(links), flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"hello from inside\n"); c.close()
`

// TestLoopbackRelay: a server a bubblewrap-confined process starts on its
// private loopback is reached through DialLoopback, not from the host's
// loopback; an empty port is refused like a connect; a non-loopback
// address is never asked for; the command does not inherit the relay; and
// a process launched without LoopbackRelay, or gone, has none.
func TestLoopbackRelay(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip("bubblewrap is unusable: " + why)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	p := newProject(t)
	l := p.launcher(ModeBubblewrap, baseEnv())
	proc, err := l.Command(t.Context(), Spec{Args: []string{"python3", "-c", relayServer}, LoopbackRelay: true})
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	proc.Stderr = &errb
	out, err := proc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proc.Kill(); _ = proc.Wait(); proc.Release() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = proc.Kill()
		_ = proc.Wait()
		t.Fatalf("the server did not start: %v\n%s", err, errb.String())
	}
	port, inherited, _ := strings.Cut(strings.TrimSpace(line), " ")
	t.Logf("descriptors of the command beyond stdio: %q", inherited)
	if strings.Contains(inherited, "socket:") {
		t.Errorf("the command inherited a socket (the relay?): %s", inherited)
	}
	ap := netip.MustParseAddrPort("127.0.0.1:" + port)

	c, err := proc.DialLoopback(t.Context(), ap)
	if err != nil {
		t.Fatalf("DialLoopback: %v", err)
	}
	got, _ := io.ReadAll(c)
	c.Close()
	if string(got) != "hello from inside\n" {
		t.Errorf("read %q through the relay", got)
	}
	// The host's loopback is another one.
	if hc, err := net.DialTimeout("tcp", ap.String(), time.Second); err == nil {
		b, _ := io.ReadAll(hc)
		hc.Close()
		if strings.Contains(string(b), "inside") {
			t.Errorf("the sandbox's server is reachable on the host's loopback")
		}
	}
	// Several at once: each exchange is its own.
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			c, err := proc.DialLoopback(t.Context(), ap)
			if err == nil {
				_, err = io.ReadAll(c)
				c.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent DialLoopback: %v", err)
		}
	}
	free := freePort(t)
	if _, err := proc.DialLoopback(t.Context(), netip.AddrPortFrom(ap.Addr(), free)); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("DialLoopback to a port nothing listens on: %v, want ECONNREFUSED", err)
	}
	if _, err := proc.DialLoopback(t.Context(), netip.MustParseAddrPort("192.0.2.1:80")); err == nil {
		t.Error("DialLoopback to a non-loopback address succeeded")
	}

	plain, err := l.Command(t.Context(), Spec{Args: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Run(); err != nil {
		t.Fatal(err)
	}
	plain.Release()
	if _, err := plain.DialLoopback(t.Context(), ap); !errors.Is(err, ErrNoRelay) {
		t.Errorf("DialLoopback of a process without a relay: %v, want ErrNoRelay", err)
	}

	_ = proc.Kill()
	_ = proc.Wait()
	if _, err := proc.DialLoopback(t.Context(), ap); !errors.Is(err, ErrNoRelay) {
		t.Errorf("DialLoopback after the process died: %v, want ErrNoRelay", err)
	}
}

// TestRelayConnectRefusesNonLoopback: the init's side connects to loopback
// addresses only, whatever it is asked.
func TestRelayConnectRefusesNonLoopback(t *testing.T) {
	for _, req := range []string{`{"addr":"192.0.2.1:80"}`, `{"addr":"example.com:80"}`, `{"addr":"[::ffff:10.0.0.1]:80"}`, `nonsense`} {
		rep, c := relayConnect([]byte(req))
		if c != nil {
			c.Close()
			t.Errorf("%s: connected", req)
		}
		if rep.Err == "" {
			t.Errorf("%s: no error", req)
		}
	}
}

func freePort(t *testing.T) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// TestRelayClientChecksReplies: Odin's end of the relay takes nothing on
// trust from the sandbox. A reply that comes after its exchange gave up is
// not taken for the next one's; a socket connected elsewhere than asked,
// or something that is not a socket, is refused.
func TestRelayClientChecksReplies(t *testing.T) {
	rc, child, err := newRelayPair()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	fc, err := net.FileConn(child)
	if err != nil {
		t.Fatal(err)
	}
	rc.started()
	init := fc.(*net.UnixConn)
	defer init.Close()
	listen := func() (net.Listener, netip.AddrPort) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln, ln.Addr().(*net.TCPAddr).AddrPort()
	}
	_, a := listen()
	_, b := listen()
	// reply answers the next request with a socket connected to dest
	// (after delay), or with the file f.
	reply := func(delay time.Duration, dest netip.AddrPort, f *os.File) {
		buf := make([]byte, 1024)
		n, err := init.Read(buf)
		if err != nil {
			return
		}
		var req relayRequest
		_ = json.Unmarshal(buf[:n], &req)
		time.Sleep(delay)
		if f == nil {
			c, err := net.Dial("tcp", dest.String())
			if err != nil {
				return
			}
			defer c.Close()
			f, _ = c.(*net.TCPConn).File()
		}
		defer f.Close()
		js, _ := json.Marshal(relayReply{ID: req.ID})
		_, _, _ = init.WriteMsgUnix(js, syscall.UnixRights(int(f.Fd())), nil)
	}

	go reply(300*time.Millisecond, a, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	_, err = rc.dial(ctx, a)
	cancel()
	if err == nil {
		t.Fatal("an exchange past its deadline succeeded")
	}
	time.Sleep(400 * time.Millisecond) // the late reply is waiting now
	go reply(0, b, nil)
	c, err := rc.dial(t.Context(), b)
	if err != nil {
		t.Fatalf("the exchange after a late reply: %v", err)
	}
	if got := c.RemoteAddr().(*net.TCPAddr).AddrPort(); got != b {
		t.Errorf("connected to %s, want %s", got, b)
	}
	c.Close()

	go reply(0, a, nil) // asked for b, sends a
	if _, err := rc.dial(t.Context(), b); err == nil || !strings.Contains(err.Error(), "not "+b.String()) {
		t.Errorf("a socket connected elsewhere: %v", err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	go reply(0, netip.AddrPort{}, null)
	if _, err := rc.dial(t.Context(), b); err == nil || !strings.Contains(err.Error(), "stream socket") {
		t.Errorf("a file that is no socket: %v", err)
	}
}

// BenchmarkDialLoopback measures one connection through the relay to a
// server in a bubblewrap sandbox: the exchange with the init, its connect
// and the check of the socket it hands back.
func BenchmarkDialLoopback(b *testing.B) {
	if _, why := probeBwrap("bwrap"); why != "" {
		b.Skip("bubblewrap is unusable: " + why)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3 is not installed")
	}
	root := b.TempDir()
	l := New(Options{Mode: ModeBubblewrap, Root: root, Environ: baseEnv})
	proc, err := l.Command(b.Context(), Spec{Args: []string{"python3", "-c", relayServer}, LoopbackRelay: true})
	if err != nil {
		b.Fatal(err)
	}
	out, err := proc.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = proc.Kill(); _ = proc.Wait(); proc.Release() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	port, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	ap := netip.MustParseAddrPort("127.0.0.1:" + port)
	b.ResetTimer()
	for b.Loop() {
		c, err := proc.DialLoopback(b.Context(), ap)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBlockedReason(t *testing.T) {
	p, err := newPolicy(nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ip   string
		want string
	}{
		{"8.8.8.8", ""},
		{"93.184.216.34", ""},
		{"2606:4700:4700::1111", ""},
		{"172.32.0.1", ""},  // just outside 172.16/12
		{"100.128.0.1", ""}, // just outside CGNAT
		{"127.0.0.1", "loopback address"},
		{"127.255.255.254", "loopback address"},
		{"::1", "loopback address"},
		{"10.1.2.3", "private address"},
		{"172.16.0.1", "private address"},
		{"172.31.255.255", "private address"},
		{"192.168.1.1", "private address"},
		{"169.254.169.254", "link-local address"},
		{"fe80::1", "link-local address"},
		{"fe80::1%eth0", "link-local address"},
		{"0.0.0.0", "unspecified address"},
		{"::", "unspecified address"},
		{"0.1.2.3", "\"this network\" address"},
		{"100.64.0.1", "carrier-grade NAT (shared) address"},
		{"100.127.255.255", "carrier-grade NAT (shared) address"},
		{"224.0.0.1", "link-local multicast address"},
		{"ff02::1", "link-local multicast address"},
		{"239.1.2.3", "multicast address"},
		{"ff05::1:3", "multicast address"},
		{"fc00::1", "unique local (private) IPv6 address"},
		{"fd12:3456::1", "unique local (private) IPv6 address"},
		{"fec0::1", "site-local address"},
		{"255.255.255.255", "reserved address"},
		{"198.18.0.1", "benchmarking address"},
		{"::ffff:10.0.0.1", "private address"},
		{"::ffff:127.0.0.1", "loopback address"},
		{"64:ff9b::a00:1", "private address (embedded in IPv6 64:ff9b::a00:1)"},
		{"64:ff9b::808:808", ""},
		{"2002:c0a8:0101::1", "private address (embedded in IPv6 2002:c0a8:101::1)"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo tunnel address"},
	}
	for _, tt := range tests {
		if got := p.blockedReason(netip.MustParseAddr(tt.ip)); got != tt.want {
			t.Errorf("blockedReason(%s) = %q, want %q", tt.ip, got, tt.want)
		}
	}
}

func TestPolicyCheck(t *testing.T) {
	p, err := newPolicy(nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = p.check("db.internal:5432", "10.0.0.5:5432")
	var be *BlockedError
	if !errors.As(err, &be) || be.Host != "db.internal:5432" || be.Addr != "10.0.0.5" || !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("check = %#v", err)
	}
	if err := p.check("example.com:443", "[2606:2800:220:1::1]:443"); err != nil {
		t.Errorf("public IPv6 refused: %v", err)
	}
	if err := p.check("x:1", "garbage"); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("unparseable dial address allowed: %v", err)
	}
}

func TestPolicyAllowed(t *testing.T) {
	p, err := newPolicy([]string{"localhost:8080", "LOCALHOST.:9090", "127.0.0.1", "[::1]:7000", "fd00::5", "http://searx.lan:8888/"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]bool{
		"localhost:8080":    true,
		"Localhost:8080":    true,
		"localhost:9090":    true,
		"localhost:8081":    false,
		"127.0.0.1:1":       true,
		"127.0.0.1:65535":   true,
		"127.0.0.2:80":      false,
		"[::1]:7000":        true,
		"[::1]:7001":        false,
		"[fd00::5]:443":     true,
		"searx.lan:8888":    true,
		"searx.lan:80":      false,
		"example.com:443":   false,
		"not a host:port:x": false,
	}
	for hp, want := range tests {
		if got := p.allowed(hp); got != want {
			t.Errorf("allowed(%q) = %v, want %v", hp, got, want)
		}
	}
}

// web.deny_hosts: a denied domain and its subdomains are refused at the
// dial (redirects and the browser's requests included) and before the
// cache; other hosts are not.
func TestDenyHosts(t *testing.T) {
	p, err := newPolicy(nil, nil, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p = p.withDeny([]string{"Evil.Example.", "*.tracker.test"})
	for host, want := range map[string]string{
		"evil.example": "evil.example", "a.b.evil.example": "evil.example", "EVIL.example.": "evil.example",
		"tracker.test": "tracker.test", "x.tracker.test": "tracker.test",
		"notevil.example": "", "example": "", "evil.example.org": "",
	} {
		if got := p.denied(host); got != want {
			t.Errorf("denied(%q) = %q, want %q", host, got, want)
		}
	}
	_, err = p.dial(t.Context(), "tcp", "api.evil.example:443")
	var de *DeniedHostError
	if !errors.As(err, &de) || de.Rule != "evil.example" || !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("dial of a denied host: %v", err)
	}
}

// TestGuardedTransportLoopback: an allowed loopback port goes to the
// loopback dialer first ("localhost" as 127.0.0.1 then ::1); where it has
// nothing listening the host's loopback answers; a loopback port not
// allowed is refused without the dialer being asked.
func TestGuardedTransportLoopback(t *testing.T) {
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "host") }))
	defer host.Close()
	_, hostPort, _ := net.SplitHostPort(host.Listener.Addr().String())
	inside := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "inside") }))
	ln := newPipeListener()
	inside.Listener = ln
	inside.Start()
	defer inside.Close()

	var mu sync.Mutex
	var asked []string
	listening := map[string]bool{"127.0.0.1:4000": true, "[::1]:4001": true}
	dial := func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
		mu.Lock()
		asked = append(asked, a.String())
		mu.Unlock()
		switch {
		case a.Port() == 4002:
			return nil, ErrNoLoopback
		case !listening[a.String()]:
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}
		return ln.dial()
	}
	tr, err := NewGuardedTransportLoopback([]string{"127.0.0.1:4000", "localhost:4001", "127.0.0.1:" + hostPort}, nil, 5*time.Second, dial)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	get := func(u string) (string, error) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", u, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	for _, c := range []struct{ url, want string }{
		{"http://127.0.0.1:4000/", "inside"},
		{"http://localhost:4001/", "inside"},
		{"http://127.0.0.1:" + hostPort + "/", "host"},
	} {
		if got, err := get(c.url); err != nil || got != c.want {
			t.Errorf("GET %s = %q, %v; want %q", c.url, got, err, c.want)
		}
	}
	mu.Lock()
	want := []string{"127.0.0.1:4000", "127.0.0.1:4001", "[::1]:4001", "127.0.0.1:" + hostPort}
	if d := cmp.Diff(want, asked); d != "" {
		t.Errorf("addresses offered to the loopback dialer (-want +got):\n%s", d)
	}
	asked = nil
	mu.Unlock()
	if _, err := get("http://127.0.0.1:4003/"); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("a loopback port not allowed: %v, want ErrBlockedAddress", err)
	}
	mu.Lock()
	if len(asked) != 0 {
		t.Errorf("the loopback dialer was asked for a port not allowed: %v", asked)
	}
	mu.Unlock()
}

// pipeListener is a net.Listener fed by dial, for a server only a loopback
// dialer reaches.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) dial() (net.Conn, error) {
	a, b := net.Pipe()
	select {
	case l.conns <- b:
		return a, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4000} }

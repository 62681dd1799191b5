package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DomainsKey is the setting that widens the network of commands; denials
// name it.
const DomainsKey = "permissions.network.allowed_domains"

// proxy is the HTTP proxy (CONNECT and plain HTTP) through which a
// sandboxed command reaches the network. It runs in Odin, outside the
// sandbox, and admits only its allowed domains; others get a 403 whose
// body names the domain and the setting that would allow it.
type proxy struct {
	allowed []string
	socket  string // unix socket (bubblewrap binds it in)
	tmpDir  string
	tcpAddr string // loopback listener (the Landlock fallback)
	tcpPort int
	srv     *http.Server
	lns     []net.Listener

	// transport carries plain HTTP requests, through guardedDial.
	transport *http.Transport

	mu      sync.Mutex
	blocked []string
	closed  bool
}

// guardedDial connects to addr ("host:port" as the command asked for it)
// unless host, an allowed name, resolves to an address of this machine or
// its link: loopback (where docker's API, databases, `odin serve` and
// other developers' servers listen), unspecified, link-local (the cloud
// metadata service at 169.254.169.254, which hands out credentials) or
// multicast. A name the command cannot choose the address of may still
// be one whose DNS its author controls (a wildcard entry, a rebinding
// name), and the proxy runs outside the sandbox: it would connect for
// the command where the sandbox keeps it out. Loopback itself stays
// reachable when the user allowed it by name: localhost, *.localhost, or
// the address itself.
func guardedDial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	explicit := h == "localhost" || strings.HasSuffix(h, ".localhost") || net.ParseIP(h) != nil
	d := &net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
		if explicit {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		if a := ap.Addr().Unmap(); a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsMulticast() ||
			a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
			return fmt.Errorf("%w: %s resolves to %s, an address of this machine or its link (allow that address itself if you mean it)", errLocalAddress, host, a)
		}
		return nil
	}}
	return d.DialContext(ctx, network, addr)
}

// errLocalAddress is why the proxy refused to connect to an allowed name.
var errLocalAddress = errors.New("odin sandbox proxy: refused")

func startProxy(allowed []string, unixSocket bool) (*proxy, error) {
	p := &proxy{allowed: allowed, transport: &http.Transport{DialContext: guardedDial, ForceAttemptHTTP2: true,
		IdleConnTimeout: 30 * time.Second, TLSHandshakeTimeout: 10 * time.Second}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	if unixSocket {
		dir, err := os.MkdirTemp("", "odin-proxy-")
		if err != nil {
			return nil, fmt.Errorf("sandbox: proxy: %w", err)
		}
		p.tmpDir = dir
		p.socket = filepath.Join(dir, "proxy.sock")
		ln, err := net.Listen("unix", p.socket)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("sandbox: proxy: %w", err)
		}
		p.lns = append(p.lns, ln)
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("sandbox: proxy: %w", err)
		}
		p.tcpAddr = ln.Addr().String()
		p.tcpPort = ln.Addr().(*net.TCPAddr).Port
		p.lns = append(p.lns, ln)
	}
	for _, ln := range p.lns {
		go func() { _ = p.srv.Serve(ln) }()
	}
	return p, nil
}

// Close stops the proxy and its open tunnels.
func (p *proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	_ = p.srv.Close()
	p.transport.CloseIdleConnections()
	for _, ln := range p.lns {
		_ = ln.Close()
	}
	if p.tmpDir != "" {
		_ = os.RemoveAll(p.tmpDir)
	}
}

// Blocked lists the hosts refused so far.
func (p *proxy) Blocked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.blocked)
	slices.Sort(out)
	return slices.Compact(out)
}

// DomainAllowed reports whether host (no port) matches one of allowed:
// "example.com" matches itself, "*.example.com" its subdomains.
func DomainAllowed(host string, allowed []string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimSpace(a))
		if sub, ok := strings.CutPrefix(a, "*."); ok {
			if strings.HasSuffix(host, "."+sub) {
				return true
			}
			continue
		}
		if host == a {
			return true
		}
	}
	return false
}

func denial(host string) string {
	return fmt.Sprintf("odin sandbox: network access to %s is not allowed; add %q to %s (or the agent's list) to allow it\n", host, host, DomainsKey)
}

func (p *proxy) admit(hostport string) (string, bool) {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if DomainAllowed(host, p.allowed) {
		return host, true
	}
	p.mu.Lock()
	p.blocked = append(p.blocked, host)
	p.mu.Unlock()
	return host, false
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Host == "" {
		http.Error(w, "odin sandbox: this is an HTTP proxy; send absolute URLs or CONNECT", http.StatusBadRequest)
		return
	}
	host, ok := p.admit(r.URL.Host)
	if !ok {
		http.Error(w, denial(host), http.StatusForbidden)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, "odin sandbox proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (p *proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, ok := p.admit(r.Host)
	if !ok {
		http.Error(w, denial(host), http.StatusForbidden)
		return
	}
	hostport := r.Host
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		hostport = net.JoinHostPort(hostport, "443")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	upstream, err := guardedDial(ctx, "tcp", hostport)
	if err != nil {
		http.Error(w, "odin sandbox proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "odin sandbox proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	_, _ = conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	relay(conn, buf, upstream)
}

// relay copies both ways until either side closes.
func relay(client net.Conn, buf *bufio.ReadWriter, upstream net.Conn) {
	defer client.Close()
	defer upstream.Close()
	done := make(chan struct{}, 2)
	go func() {
		if buf != nil && buf.Reader.Buffered() > 0 {
			_, _ = io.CopyN(upstream, buf, int64(buf.Reader.Buffered()))
		}
		_, _ = io.Copy(upstream, client)
		done <- struct{}{}
	}()
	go func() { _, _ = io.Copy(client, upstream); done <- struct{}{} }()
	<-done
}

// forward relays connections on ln to the unix socket at path (the init
// inside bubblewrap, whose network namespace has only a loopback).
func forward(ln net.Listener, path string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		go func() {
			u, err := net.Dial("unix", path)
			if err != nil {
				c.Close()
				return
			}
			relay(c, nil, u)
		}()
	}
}

func portOf(ln net.Listener) string {
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

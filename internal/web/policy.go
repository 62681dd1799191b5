package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// policy decides which addresses Odin may connect to. The check runs in
// the dialer's Control hook, after DNS resolution and immediately before
// connect(2), on the very IP being dialled: a hostname cannot pass the
// check with one answer and connect with another (DNS rebinding), and
// redirects are checked exactly like first requests.
//
// A policy is immutable after construction and safe for concurrent use.
type policy struct {
	// hostPorts are allowed "host:port" pairs; hosts are allowed on any
	// port. Both hold lower-case names without a trailing dot.
	hostPorts map[string]bool
	hosts     map[string]bool
	ranges    []blockedRange
	nat64     []netip.Prefix
	sixToFour netip.Prefix
	resolver  *net.Resolver
	timeout   time.Duration
	// deny are web.deny_hosts: domains never dialled, subdomains
	// included (lower case, no "*." or trailing dot).
	deny []string
	// loopback, when set, is offered the connections to allowed loopback
	// hosts first (NewGuardedTransportLoopback).
	loopback LoopbackDialer
}

type blockedRange struct {
	prefix netip.Prefix
	reason string
}

// newPolicy builds a policy allowing hosts (entries of web.allow_hosts:
// "localhost", "127.0.0.1:8080", "[::1]:9000", or a URL whose host is
// taken).
func newPolicy(hosts []string, resolver *net.Resolver, dialTimeout time.Duration) (*policy, error) {
	p := &policy{
		hostPorts: map[string]bool{},
		hosts:     map[string]bool{},
		ranges:    specialRanges(),
		nat64:     []netip.Prefix{netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("64:ff9b:1::/48")},
		sixToFour: netip.MustParsePrefix("2002::/16"),
		resolver:  resolver,
		timeout:   dialTimeout,
	}
	for _, h := range hosts {
		if err := p.allow(h); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *policy) allow(entry string) error {
	e := strings.TrimSpace(entry)
	if e == "" {
		return nil
	}
	if strings.Contains(e, "://") {
		u, err := url.Parse(e)
		if err != nil || u.Host == "" {
			return fmt.Errorf("web: allow_hosts entry %q: not a host, host:port or URL", entry)
		}
		e = u.Host
	}
	if host, port, err := net.SplitHostPort(e); err == nil {
		if host == "" || port == "" {
			return fmt.Errorf("web: allow_hosts entry %q: empty host or port", entry)
		}
		p.hostPorts[net.JoinHostPort(canonicalHost(host), port)] = true
		return nil
	}
	// A bare name or address; IPv6 literals may come with brackets.
	e = strings.TrimSuffix(strings.TrimPrefix(e, "["), "]")
	if strings.ContainsAny(e, "/ ") {
		return fmt.Errorf("web: allow_hosts entry %q: not a host, host:port or URL", entry)
	}
	p.hosts[canonicalHost(e)] = true
	return nil
}

// allowed reports whether hostport ("host:port", as the HTTP transport
// dials it) was explicitly allowed by the user.
func (p *policy) allowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	host = canonicalHost(host)
	return p.hosts[host] || p.hostPorts[net.JoinHostPort(host, port)]
}

// allowedURL reports whether the host of u, on its effective port, is
// allowed.
func (p *policy) allowedURL(u *url.URL) bool {
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	return p.allowed(net.JoinHostPort(u.Hostname(), port))
}

func canonicalHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

func defaultPort(scheme string) string {
	if scheme == "http" {
		return "80"
	}
	return "443"
}

// dial is the transport's DialContext. Allowed hosts are dialled as is;
// every other connection goes through the Control check.
func (p *policy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if rule := p.denied(host); rule != "" {
			return nil, &DeniedHostError{Host: host, Rule: rule}
		}
	}
	if p.loopback != nil && p.allowed(addr) {
		if c, done, err := p.dialLoopback(ctx, addr); done {
			return c, err
		}
	}
	d := &net.Dialer{Timeout: p.timeout, KeepAlive: 30 * time.Second, Resolver: p.resolver}
	if !p.allowed(addr) {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			return p.check(addr, address)
		}
	}
	return d.DialContext(ctx, network, addr)
}

// dialLoopback offers a connection to an allowed loopback host:port to
// p.loopback: done is false when it has nothing listening there, and the
// host's loopback is dialled as before. "localhost" is tried as 127.0.0.1,
// then ::1 (dev servers bind either); other names are not offered.
func (p *policy) dialLoopback(ctx context.Context, addr string) (net.Conn, bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false, nil
	}
	pn, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, false, nil
	}
	var targets []netip.Addr
	switch h := canonicalHost(host); {
	case h == "localhost":
		targets = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	default:
		if a, err := netip.ParseAddr(h); err == nil && a.IsLoopback() {
			targets = []netip.Addr{a}
		}
	}
	for _, a := range targets {
		c, err := p.loopback(ctx, netip.AddrPortFrom(a, uint16(pn)))
		switch {
		case err == nil:
			return c, true, nil
		case errors.Is(err, ErrNoLoopback), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EADDRNOTAVAIL):
			continue
		default:
			return nil, true, err
		}
	}
	return nil, false, nil
}

// withDeny adds web.deny_hosts entries to p.
func (p *policy) withDeny(hosts []string) *policy {
	for _, h := range hosts {
		h = canonicalHost(strings.TrimPrefix(strings.TrimSpace(h), "*."))
		if h != "" {
			p.deny = append(p.deny, h)
		}
	}
	return p
}

// denied is the web.deny_hosts entry host falls under, "" for none.
func (p *policy) denied(host string) string {
	host = canonicalHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	for _, d := range p.deny {
		if host == d || strings.HasSuffix(host, "."+d) {
			return d
		}
	}
	return ""
}

// check is the connection-time test of the resolved address of host.
func (p *policy) check(host, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Host: host, Addr: address, Reason: "unparseable address"}
	}
	if reason := p.blockedReason(ap.Addr()); reason != "" {
		return &BlockedError{Host: host, Addr: ap.Addr().String(), Reason: reason}
	}
	return nil
}

// blockedReason says why ip may not be dialled, or "" when it may.
func (p *policy) blockedReason(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	switch {
	case !ip.IsValid():
		return "invalid address"
	case ip.IsUnspecified():
		return "unspecified address"
	case ip.IsLoopback():
		return "loopback address"
	case ip.IsPrivate():
		if ip.Is6() {
			return "unique local (private) IPv6 address"
		}
		return "private address"
	case ip.IsLinkLocalUnicast():
		return "link-local address"
	case ip.IsLinkLocalMulticast():
		return "link-local multicast address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast address"
	}
	for _, r := range p.ranges {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	// IPv6 forms that carry an IPv4 address the host would really reach.
	if ip.Is6() {
		b := ip.As16()
		var v4 netip.Addr
		switch {
		case p.nat64[0].Contains(ip), p.nat64[1].Contains(ip):
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case p.sixToFour.Contains(ip):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if v4.IsValid() {
			if r := p.blockedReason(v4); r != "" {
				return r + " (embedded in IPv6 " + ip.String() + ")"
			}
		}
	}
	return ""
}

// specialRanges are the special-purpose blocks (RFC 6890 and successors)
// not covered by netip's predicates that must never be reached from a
// model-chosen URL.
func specialRanges() []blockedRange {
	list := []struct{ cidr, reason string }{
		{"0.0.0.0/8", "\"this network\" address"},
		{"100.64.0.0/10", "carrier-grade NAT (shared) address"},
		{"192.0.0.0/24", "IETF protocol assignment address"},
		{"192.0.2.0/24", "documentation address"},
		{"198.18.0.0/15", "benchmarking address"},
		{"198.51.100.0/24", "documentation address"},
		{"203.0.113.0/24", "documentation address"},
		{"240.0.0.0/4", "reserved address"},
		{"100::/64", "discard-only address"},
		{"2001::/32", "Teredo tunnel address"},
		{"2001:db8::/32", "documentation address"},
		{"fec0::/10", "site-local address"},
	}
	out := make([]blockedRange, len(list))
	for i, r := range list {
		out[i] = blockedRange{prefix: netip.MustParsePrefix(r.cidr), reason: r.reason}
	}
	return out
}

// NewGuardedTransport returns an HTTP transport that connects only where
// WebFetch may: public addresses, and the private or loopback hosts
// allowHosts names (entries as web.allow_hosts takes them). It follows no
// redirect itself and ignores proxy settings. WebBrowser's page requests
// go through it.
func NewGuardedTransport(allowHosts, denyHosts []string, timeout time.Duration) (*http.Transport, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	p, err := newPolicy(allowHosts, nil, timeout)
	if err != nil {
		return nil, err
	}
	return newTransport(p.withDeny(denyHosts), timeout), nil
}

// LoopbackDialer connects to a loopback address and port somewhere other
// than the host's own loopback: a sandbox's private network namespace,
// where a dev server an agent started listens. It returns an error
// matching ErrNoLoopback when it has nowhere to connect, or one matching
// syscall.ECONNREFUSED when nothing listens there.
type LoopbackDialer func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)

// ErrNoLoopback: a LoopbackDialer has no loopback to connect to (no live
// sandbox).
var ErrNoLoopback = errors.New("web: no loopback to relay to")

// NewGuardedTransportLoopback is NewGuardedTransport whose connections to
// loopback hosts that allowHosts allows (127.0.0.1, ::1 or localhost,
// with their port) go to loopback first; where it reports nothing
// listening (ErrNoLoopback, a refused connect) the host's loopback is
// dialled, as NewGuardedTransport would. Loopback hosts not allowed never
// reach loopback: the policy refuses them before it is asked.
func NewGuardedTransportLoopback(allowHosts, denyHosts []string, timeout time.Duration, loopback LoopbackDialer) (*http.Transport, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	p, err := newPolicy(allowHosts, nil, timeout)
	if err != nil {
		return nil, err
	}
	p.loopback = loopback
	return newTransport(p.withDeny(denyHosts), timeout), nil
}

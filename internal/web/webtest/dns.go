package webtest

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// Resolver returns a *net.Resolver answering from hosts (name → IP
// addresses) through an in-process DNS server, so tests can make a public
// looking name resolve to an internal address without touching the
// machine's DNS. Names not in hosts get NXDOMAIN.
func Resolver(hosts map[string][]string) *net.Resolver {
	table := map[string][]netip.Addr{}
	for name, ips := range hosts {
		key := strings.ToLower(strings.TrimSuffix(name, ".")) + "."
		for _, ip := range ips {
			table[key] = append(table[key], netip.MustParseAddr(ip))
		}
	}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			client, server := net.Pipe()
			go serveDNS(server, table)
			return client, nil
		},
	}
}

// serveDNS answers queries on c with DNS-over-TCP framing (a pipe is not
// a PacketConn, so the resolver frames its queries that way) until the
// resolver closes the connection.
func serveDNS(c net.Conn, table map[string][]netip.Addr) {
	defer c.Close()
	for {
		var size [2]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		resp, err := answer(msg, table)
		if err != nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

func answer(msg []byte, table map[string][]netip.Addr) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	ips, known := table[strings.ToLower(q.Name.String())]
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	for _, ip := range ips {
		rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
		switch {
		case q.Type == dnsmessage.TypeA && ip.Is4():
			err = b.AResource(rr, dnsmessage.AResource{A: ip.As4()})
		case q.Type == dnsmessage.TypeAAAA && ip.Is6():
			err = b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: ip.As16()})
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
)

// relayFD: see relay_linux.go; there is no bubblewrap elsewhere.
const relayFD = 4

// ErrNoRelay says a process has no loopback relay (only Linux's
// bubblewrap sandbox has one).
var ErrNoRelay = errors.New("sandbox: the process has no loopback relay")

type relayClient struct{}

func newRelayPair() (*relayClient, *os.File, error) { return nil, nil, ErrNoRelay }

func (*relayClient) started() {}
func (*relayClient) close()   {}

func (*relayClient) dial(context.Context, netip.AddrPort) (net.Conn, error) { return nil, ErrNoRelay }

func serveRelay(int) error { return ErrNoRelay }

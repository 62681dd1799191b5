package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
)

// The loopback relay lets Odin connect to a server a sandboxed command
// started on its private loopback (a dev server behind WebBrowser), and to
// nothing else. Under bubblewrap the command has a network namespace of
// its own: its 127.0.0.1 is not the host's, and an unprivileged Odin
// cannot enter that namespace (setns needs CAP_SYS_ADMIN in Odin's own
// user namespace). So the namespace's init helper, already inside, does
// the connecting: Odin holds one end of a SOCK_SEQPACKET pair, the init
// the other (relayFD, never inherited by the command); Odin sends
// {"addr":"127.0.0.1:8000"}, the init connects there and sends back the
// connected socket itself (SCM_RIGHTS), or the error. No byte is copied
// and nothing flows the other way: Odin never hands the sandbox a file
// descriptor, so the sandbox gains no route to the host's network.

// relayFD is the init helper's end of the relay pair in the sandbox.
// fd 3 is bwrap's --info-fd and a plan with an init has no --seccomp
// pipe, so the pair's end is the next one.
const relayFD = 4

// ErrNoRelay says a process has no loopback relay: it was not launched
// with Spec.LoopbackRelay, it runs without a network namespace of its
// own (then its servers are on the host's loopback), or it has exited.
var ErrNoRelay = errors.New("sandbox: the process has no loopback relay")

// relayDialTimeout bounds the init's connect and the whole exchange: a
// loopback connect is answered at once, by a listener or a refusal.
const relayDialTimeout = 5 * time.Second

// A request and its reply carry the same ID: the reply to an exchange
// that timed out must not be taken for the next one's.
type relayRequest struct {
	ID   uint64 `json:"id"`
	Addr string `json:"addr"`
}

type relayReply struct {
	ID    uint64 `json:"id"`
	Err   string `json:"error,omitempty"`
	Errno int    `json:"errno,omitempty"`
}

// relayClient is Odin's end of a process's relay.
type relayClient struct {
	mu       sync.Mutex // one exchange at a time
	nextID   uint64
	conn     *net.UnixConn
	child    *os.File // the sandbox's end, closed once the process started
	closeKid sync.Once
}

// newRelayPair returns Odin's end and the file to hand to the sandbox.
func newRelayPair() (*relayClient, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: loopback relay: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "relay")
	c, err := net.FileConn(mine)
	_ = mine.Close()
	if err != nil {
		_ = syscall.Close(fds[1])
		return nil, nil, fmt.Errorf("sandbox: loopback relay: %w", err)
	}
	child := os.NewFile(uintptr(fds[1]), "relay-child")
	return &relayClient{conn: c.(*net.UnixConn), child: child}, child, nil
}

// started drops Odin's copy of the sandbox's end, so that the relay's
// death reads as EOF. Safe more than once.
func (r *relayClient) started() { r.closeKid.Do(func() { _ = r.child.Close() }) }

func (r *relayClient) close() {
	r.started()
	_ = r.conn.Close()
}

// dial asks the init to connect to addr in its namespace and checks that
// what comes back is a TCP socket connected to addr.
func (r *relayClient) dial(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
	if !addr.Addr().Unmap().IsLoopback() {
		return nil, fmt.Errorf("sandbox: loopback relay: %s is not a loopback address", addr)
	}
	r.started()
	r.mu.Lock()
	defer r.mu.Unlock()
	deadline := time.Now().Add(relayDialTimeout + time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = r.conn.SetDeadline(deadline)
	r.nextID++
	id := r.nextID
	req, _ := json.Marshal(relayRequest{ID: id, Addr: addr.String()})
	if _, err := r.conn.Write(req); err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNoRelay, err)
	}
	buf := make([]byte, 1024)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	var (
		rep relayReply
		fds []int
		err error
	)
	for {
		n, oobn, _, _, rerr := r.conn.ReadMsgUnix(buf, oob)
		if rerr != nil {
			return nil, fmt.Errorf("%w (%v)", ErrNoRelay, rerr)
		}
		if n == 0 {
			return nil, ErrNoRelay // the init is gone
		}
		fds = receivedFDs(oob[:oobn])
		rep = relayReply{}
		err = json.Unmarshal(buf[:n], &rep)
		if err != nil || rep.ID == id {
			break
		}
		closeFDs(fds) // a late reply to an exchange given up on
	}
	if err != nil || rep.Err != "" || len(fds) != 1 {
		closeFDs(fds)
		switch {
		case err != nil:
			return nil, fmt.Errorf("sandbox: loopback relay: bad reply: %v", err)
		case rep.Errno != 0:
			return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(addr), Err: os.NewSyscallError("connect", syscall.Errno(rep.Errno))}
		case rep.Err != "":
			return nil, fmt.Errorf("sandbox: loopback relay: %s", rep.Err)
		default:
			return nil, fmt.Errorf("sandbox: loopback relay: %d descriptors in the reply, want 1", len(fds))
		}
	}
	return relayedConn(fds[0], addr)
}

// relayedConn checks fd, which came from inside the sandbox, before it is
// used as a connection to addr: a TCP stream socket whose peer is addr.
func relayedConn(fd int, addr netip.AddrPort) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "relayed")
	defer f.Close()
	typ, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TYPE)
	if err != nil || typ != syscall.SOCK_STREAM {
		return nil, errors.New("sandbox: loopback relay: the init sent something other than a stream socket")
	}
	peer, err := syscall.Getpeername(fd)
	if err != nil {
		return nil, fmt.Errorf("sandbox: loopback relay: the relayed socket is not connected: %w", err)
	}
	var got netip.AddrPort
	switch sa := peer.(type) {
	case *syscall.SockaddrInet4:
		got = netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *syscall.SockaddrInet6:
		got = netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), uint16(sa.Port))
	default:
		return nil, errors.New("sandbox: loopback relay: the relayed socket is not a TCP socket")
	}
	if got.Addr().Unmap() != addr.Addr().Unmap() || got.Port() != addr.Port() {
		return nil, fmt.Errorf("sandbox: loopback relay: the relayed socket is connected to %s, not %s", got, addr)
	}
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("sandbox: loopback relay: %w", err)
	}
	return c, nil
}

func receivedFDs(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range msgs {
		if fds, err := syscall.ParseUnixRights(&m); err == nil {
			out = append(out, fds...)
		}
	}
	return out
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		_ = syscall.Close(fd)
	}
}

// serveRelay is the init helper's side: it answers Odin's requests on fd
// until Odin closes its end. It runs on threads other than the one the
// command is started from, so the socket filter the command gets does not
// apply to it; it only ever connects to loopback addresses.
func serveRelay(fd int) error {
	f := os.NewFile(uintptr(fd), "relay")
	c, err := net.FileConn(f) // a close-on-exec duplicate
	_ = f.Close()             // the command must not inherit the relay
	if err != nil {
		return fmt.Errorf("loopback relay: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		_ = c.Close()
		return errors.New("loopback relay: not a unix socket")
	}
	go func() {
		defer uc.Close()
		buf := make([]byte, 1024)
		for {
			n, err := uc.Read(buf)
			if err != nil || n == 0 {
				return
			}
			rep, conn := relayConnect(buf[:n])
			js, _ := json.Marshal(rep)
			var oob []byte
			var file *os.File
			if conn != nil {
				if file, err = conn.File(); err == nil {
					oob = syscall.UnixRights(int(file.Fd()))
				} else {
					js, _ = json.Marshal(relayReply{ID: rep.ID, Err: err.Error()})
				}
				_ = conn.Close()
			}
			_, _, err = uc.WriteMsgUnix(js, oob, nil)
			if file != nil {
				_ = file.Close()
			}
			if err != nil {
				return
			}
		}
	}()
	return nil
}

// relayConnect connects to the loopback address a request names.
func relayConnect(req []byte) (relayReply, *net.TCPConn) {
	var r relayRequest
	if err := json.Unmarshal(req, &r); err != nil {
		return relayReply{Err: "malformed request"}, nil
	}
	ap, err := netip.ParseAddrPort(r.Addr)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		return relayReply{ID: r.ID, Err: fmt.Sprintf("%q is not a loopback address and port", r.Addr)}, nil
	}
	d := net.Dialer{Timeout: relayDialTimeout}
	c, err := d.Dial("tcp", ap.String())
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return relayReply{ID: r.ID, Err: err.Error(), Errno: int(errno)}, nil
		}
		return relayReply{ID: r.ID, Err: err.Error()}, nil
	}
	return relayReply{ID: r.ID}, c.(*net.TCPConn)
}

// Package pgtest runs a throwaway PostgreSQL server for tests: initdb in a
// temporary directory, postgres listening only on a unix socket in that
// directory (no TCP port to collide with anything), a fresh database per
// caller, and a stop by PID when done. Where the PostgreSQL binaries are
// absent, New skips the test and says so.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNotInstalled: initdb or postgres was not found.
var ErrNotInstalled = errors.New("postgresql server binaries (initdb, postgres) not found in PATH or /usr/lib/postgresql/*/bin")

// Server is one running postgres.
type Server struct {
	dir  string // holds data/ and the socket
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been reaped
	log  *os.File
	next atomic.Int64 // database name counter
	// port, when set, is the TCP port on 127.0.0.1 the server also
	// listens on, and URL names it instead of the socket.
	port int
}

// Find returns the directory holding initdb and postgres: the newest
// /usr/lib/postgresql/N/bin (Debian keeps them off PATH), else PATH's.
func Find() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	i, err1 := exec.LookPath("initdb")
	p, err2 := exec.LookPath("postgres")
	if err1 == nil && err2 == nil && filepath.Dir(i) == filepath.Dir(p) {
		return filepath.Dir(i), nil
	}
	return "", ErrNotInstalled
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// New starts a server for t and stops it when t ends; it skips t when the
// binaries are absent and fails it when the server does not start.
func New(t testing.TB) *Server {
	t.Helper()
	return newServer(t, false)
}

// NewTCP is New with the server reached over TCP on 127.0.0.1 (a free
// port) rather than its unix socket: what a server on another host costs
// in round trips, minus the network, for benchmarks.
func NewTCP(t testing.TB) *Server {
	t.Helper()
	return newServer(t, true)
}

func newServer(t testing.TB, tcp bool) *Server {
	t.Helper()
	began := time.Now()
	start := Start
	if tcp {
		start = StartTCP
	}
	s, err := start(context.Background())
	if errors.Is(err, ErrNotInstalled) {
		t.Skipf("pgtest: %v (install postgresql to run the PostgreSQL store tests)", err)
	}
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Logf("pgtest: initdb and postgres start took %s", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("pgtest: stop: %v", err)
		}
	})
	return s
}

// Start runs initdb in a new temporary directory and starts postgres on
// it, returning once the server accepts connections. PostgreSQL refuses
// to run as root, so as root both run as the postgres user, which then
// owns the directory. Stop must be called.
func Start(ctx context.Context) (*Server, error) { return start(ctx, 0) }

// StartTCP is Start with the server also listening on a free TCP port of
// 127.0.0.1, which its URLs then name.
func StartTCP(ctx context.Context) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return start(ctx, port)
}

func start(ctx context.Context, port int) (_ *Server, err error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "odin-pg-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	run := func(cmd *exec.Cmd) {
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--no-sync", "--encoding=UTF8", "--locale=C")
	run(initdb)
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	log, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	// Durability is worthless for a throwaway database; fsync off makes
	// every commit and CREATE DATABASE cheap.
	listen := "listen_addresses="
	args := []string{"-D", data, "-k", dir}
	if port != 0 {
		listen = "listen_addresses=127.0.0.1"
		args = append(args, "-p", strconv.Itoa(port))
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), append(args,
		"-c", listen, "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200")...)
	run(cmd)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Server{dir: dir, cmd: cmd, done: make(chan struct{}), log: log, port: port}
	go func() { cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// waitReady polls until the server accepts a connection, it exits, or
// the budget runs out.
func (s *Server) waitReady(ctx context.Context, budget time.Duration) error {
	deadline := time.Now().Add(budget)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		c, err := pgconn.Connect(cctx, s.URL("postgres"))
		cancel()
		if err == nil {
			return c.Close(ctx)
		}
		select {
		case <-s.done:
			out, _ := os.ReadFile(s.log.Name())
			return fmt.Errorf("postgres exited at start: %s", out)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not accepting connections after %s: %w", budget, err)
		}
	}
}

// URL is the connection URL of database db on this server.
func (s *Server) URL(db string) string {
	q := url.Values{"host": {s.dir}, "sslmode": {"disable"}}
	if s.port != 0 {
		q = url.Values{"host": {"127.0.0.1"}, "port": {strconv.Itoa(s.port)}, "sslmode": {"disable"}}
	}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// Database creates a new, empty database and returns its URL.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	u, err := s.CreateDatabase(context.Background())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// CreateDatabase creates a new, empty database and returns its URL.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("odin_test_%d", s.next.Add(1))
	c, err := pgconn.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name).ReadAll(); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// Stop stops the server by its PID: SIGINT (a fast shutdown that ends
// open sessions), then SIGKILL if it is still there after 10 s; it reaps
// the process and removes the directory.
func (s *Server) Stop() error {
	defer s.log.Close()
	var err error
	select {
	case <-s.done:
	default:
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
			err = errors.New("postgres ignored SIGINT for 10 s and was killed")
		}
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

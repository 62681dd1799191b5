package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// initArg marks a process started as the sandbox's init (see Main).
const initArg = "__odin_sandbox_init"

// Paths inside a bubblewrap sandbox.
const (
	innerInit  = "/tmp/.odin-init"
	innerProxy = "/tmp/.odin-proxy.sock"
)

// initSpec is what the init helper is told on its command line.
type initSpec struct {
	// Landlock, when set, confines writes (and TCP connects) before the
	// command starts.
	Landlock *landlockRules `json:"landlock,omitempty"`
	// ProxySocket, when set, is a unix socket the init relays a loopback
	// TCP port to; the command gets HTTP(S)_PROXY pointing at that port.
	ProxySocket string `json:"proxy_socket,omitempty"`
	// ParentPID is the process that started the init: if it is gone
	// already, the init does not start the command.
	ParentPID int `json:"ppid,omitempty"`
	// Seccomp, when set, is the socket filter the command gets.
	Seccomp *seccompSpec `json:"seccomp,omitempty"`
}

// landlockRules are the accesses a Landlock-confined command keeps.
type landlockRules struct {
	ABI int `json:"abi"`
	// Write are the paths beneath which writes are allowed (for files:
	// writing and truncating them only).
	Write []string `json:"write"`
	// Read, when set, confines reading files to beneath these paths (the
	// read deny list); empty leaves reading alone.
	Read []string `json:"read,omitempty"`
	// NoNet restricts TCP connects to ConnectPorts (ABI 4 and later).
	NoNet        bool  `json:"no_net,omitempty"`
	ConnectPorts []int `json:"connect_ports,omitempty"`
}

// devFiles are the device files a command may write without bubblewrap's
// minimal /dev: enough for `> /dev/null`, nothing that reaches a
// terminal.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/urandom"}

func proxyEnv(url string) []string {
	return []string{"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
		"ALL_PROXY=" + url, "all_proxy=" + url, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"}
}

// bwrapCommand builds the bubblewrap command line: a read-only view of
// the whole file system with the writable directories bound back
// read-write and the protected paths bound read-only again on top, fresh
// /dev, /proc and /tmp, every namespace new (no network), no capabilities.
func (l *Launcher) bwrapCommand(ctx context.Context, p *Process, spec Spec, env []string, domains []string) error {
	args := []string{"--new-session", "--die-with-parent", "--unshare-all", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
	if spec.Network == NetworkFull {
		args = append(args, "--share-net")
	}
	sockets := l.unixSockets(spec.Agent)
	args = append(args, socketArgs(spec, sockets, l.opts.Environ())...)
	// bwrap's own reaper would be PID 1: unfiltered, and open to ptrace
	// and /proc/1/mem from the command it started (same user, dumpable),
	// hence a way around the socket filter. Without it the command, or
	// Odin's undumpable init, is PID 1, and the namespace still dies with
	// it.
	args = append(args, "--as-pid-1")
	writable := l.writableDirs()
	bind := "--ro-bind"
	if spec.Write {
		bind = "--bind"
	}
	// The writable directories are bound even when read-only, so that they
	// stay visible when they lie under the private /tmp. A later mount
	// hides what an earlier one put beneath it, so parents go first: a
	// granted directory inside a read-only root stays writable, and a
	// read-only root inside a granted directory stays read-only.
	granted := resolveDirs(spec.Writable)
	type mount struct {
		dir  string
		flag string
	}
	var mounts []mount
	for _, w := range writable {
		mounts = append(mounts, mount{w, bind})
	}
	for _, w := range granted {
		if !slices.Contains(writable, w) || !spec.Write {
			mounts = append(mounts, mount{w, "--bind"})
		}
	}
	// Only what the private /tmp hides: binding onto a path that is
	// visible already fails when it is a symlink. In the same order, so
	// that a visible parent does not cover a granted directory.
	for i, v := range spec.Visible {
		// Shown by a bind already, v may be a symlink there now.
		shown := slices.ContainsFunc(append(slices.Clone(granted), writable...), func(w string) bool { return within(w, v) }) ||
			slices.ContainsFunc(spec.Visible, func(o string) bool { return o != v && within(o, v) }) ||
			slices.Contains(spec.Visible[:i], v)
		if within("/tmp", v) && !shown {
			mounts = append(mounts, mount{v, "--ro-bind"})
		}
	}
	slices.SortStableFunc(mounts, func(a, b mount) int { return strings.Count(a.dir, "/") - strings.Count(b.dir, "/") })
	for _, m := range mounts {
		args = append(args, m.flag, m.dir, m.dir)
	}
	protected := l.protectedPaths(append(slices.Clone(writable), granted...))
	for _, pp := range protected {
		args = append(args, "--ro-bind", pp, pp)
	}
	// A granted directory inside a protected one (a server's data
	// directory under Odin's state directory) is writable again.
	for _, w := range granted {
		if slices.ContainsFunc(protected, func(pp string) bool { return pp != w && within(pp, w) }) {
			args = append(args, "--bind", w, w)
		}
	}
	// The private cache stays writable in ask and plan mode: read-only
	// commands such as go vet need a build cache, and nothing in it is the
	// user's (it only feeds later sandboxed commands of this project).
	if c := l.cacheDir(); c != "" {
		args = append(args, "--bind", c, c)
	}
	// The user's build cache, read through GOCACHEPROG by Odin's binary
	// (bound where the init goes): read-only even where a parent is
	// writable, and visible when it lives under the hidden /tmp.
	exeBound := false
	if gc := l.goCacheLower(l.cacheDir()); gc != "" {
		args = append(args, "--ro-bind", gc, gc, "--ro-bind", l.exe, innerInit)
		exeBound = true
	}
	args = append(args, l.denyArgs()...)
	argv := spec.Args
	if len(domains) > 0 {
		px, err := startProxy(domains, true)
		if err != nil {
			return err
		}
		p.proxy = px
		if l.exe == "" {
			return fmt.Errorf("sandbox: cannot find Odin's own binary to relay the network proxy")
		}
		// The init relays the proxy over a unix socket, so bwrap must not
		// filter it: it installs the filter on the thread it starts the
		// command from (see installSocketFilter).
		js, _ := json.Marshal(initSpec{ProxySocket: innerProxy, Seccomp: l.seccomp(sockets, spec)})
		if !exeBound {
			args = append(args, "--ro-bind", l.exe, innerInit)
		}
		args = append(args, "--bind", px.socket, innerProxy)
		argv = append([]string{innerInit, initArg, string(js), "--"}, argv...)
	}
	args = append(args, "--chdir", spec.Dir, "--")
	args = append(args, argv...)
	// bwrap reports the PID of the namespace's init on --info-fd, so that
	// Release can wait until the namespace (everything in it) is gone:
	// bwrap itself exits as soon as the command does, before the kernel
	// has finished killing the rest.
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	p.infoR, p.infoW = infoR, infoW
	p.nsReady = make(chan struct{})
	go p.readInfo()
	track(p)
	args = append([]string{"--info-fd", "3"}, args...)
	extra := []*os.File{infoW}
	if sc := l.seccomp(sockets, spec); sc != nil && len(domains) == 0 {
		// No init: bwrap applies the filter itself, just before it runs
		// the command, which saves starting Odin's binary once more.
		r, prog, err := filterPipe(sc.AllowUnix)
		if err != nil {
			return err
		}
		p.seccompR, p.seccompProg = r, prog
		extra = append(extra, r)
		args = append([]string{"--seccomp", "4"}, args...)
	}
	cmd := exec.CommandContext(ctx, l.bwrap, args...)
	cmd.ExtraFiles = extra
	cmd.Dir = spec.Dir
	cmd.Env = env
	cmd.SysProcAttr = sessionAttr(syscall.SIGKILL)
	// Killing the namespace's init kills everything in it; bwrap dies with
	// its group.
	cmd.Cancel = p.Kill
	p.Cmd = cmd
	return nil
}

// initCommand runs the command under Odin's init helper (the Landlock
// fallback, and unconfined runs): the helper confines itself with
// Landlock when landlock is set, becomes a subreaper and kills every
// descendant when the command ends, when it is signalled and when Odin
// dies.
func (l *Launcher) initCommand(ctx context.Context, p *Process, spec Spec, env []string, domains []string, landlock bool) error {
	is := initSpec{ParentPID: os.Getpid()}
	if landlock {
		rules := &landlockRules{ABI: l.abi}
		protected := l.protectedPaths(l.writableDirs())
		if spec.Write {
			for _, w := range l.writableDirs() {
				rules.Write = append(rules.Write, grantBeneath(w, protected)...)
			}
		}
		granted := resolveDirs(spec.Writable)
		protected = l.protectedPaths(append(l.writableDirs(), granted...))
		for _, w := range granted {
			rules.Write = append(rules.Write, grantBeneath(w, protected)...)
		}
		if c := l.cacheDir(); c != "" {
			rules.Write = append(rules.Write, c) // as with bubblewrap
		}
		rules.Write = append(rules.Write, devFiles...)
		rules.Read = l.landlockReadGrants()
		rules.NoNet = l.abi >= 4 && spec.Network != NetworkFull
		is.Landlock = rules
		is.Seccomp = l.seccomp(l.unixSockets(spec.Agent), spec)
	}
	if len(domains) > 0 {
		px, err := startProxy(domains, false)
		if err != nil {
			return err
		}
		p.proxy = px
		env = append(env, proxyEnv("http://"+px.tcpAddr)...)
		if is.Landlock != nil {
			is.Landlock.ConnectPorts = append(is.Landlock.ConnectPorts, px.tcpPort)
		}
	}
	var cmd *exec.Cmd
	if l.exe == "" {
		// Unconfined and without the helper: the process group is all
		// that can be killed.
		cmd = exec.CommandContext(ctx, spec.Args[0], spec.Args[1:]...)
		cmd.Cancel = killGroup(cmd)
	} else {
		js, err := json.Marshal(is)
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		cmd = exec.CommandContext(ctx, l.exe, append([]string{initArg, string(js), "--"}, spec.Args...)...)
		// The helper kills the whole tree on SIGTERM, setsid escapees
		// included; SIGKILL would leave them behind.
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	}
	cmd.Dir = spec.Dir
	cmd.Env = env
	cmd.SysProcAttr = sessionAttr(syscall.SIGTERM)
	p.Cmd = cmd
	return nil
}

// grantBeneath returns the paths that together cover dir except the
// protected paths inside it: dir itself when none is inside, else its
// entries, recursing into those that contain a protected path. Landlock
// only grants, never denies beneath a grant, so this is how .git stays
// read-only inside a writable root; the price is that dir itself gets no
// rule (nothing can be created or removed directly in it).
func grantBeneath(dir string, protected []string) []string {
	var inside []string
	for _, p := range protected {
		if within(dir, p) {
			inside = append(inside, p)
		}
	}
	if len(inside) == 0 {
		return []string{dir}
	}
	if slices.Contains(inside, dir) {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, grantBeneath(filepath.Join(dir, e.Name()), inside)...)
	}
	return out
}

// filterPipe returns a pipe holding the compiled socket filter, for bwrap
// --seccomp, which reads it to the end, and the filter itself.
func filterPipe(allowUnix bool) (*os.File, []byte, error) {
	prog, err := bwrapFilter(allowUnix)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	r, err := progPipe(prog)
	if err != nil {
		return nil, nil, err
	}
	return r, prog, nil
}

// progPipe returns a pipe holding prog, read to the end by bwrap.
func progPipe(prog []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// A few dozen bytes: far below the pipe's buffer, so this never
	// blocks.
	_, err = w.Write(prog)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("sandbox: seccomp filter: %w", err)
	}
	return r, nil
}

// resolveDirs resolves symlinks in dirs, leaving out missing ones and
// duplicates.
func resolveDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if real, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	Landlock *LandlockRules `json:"landlock,omitempty"`
	// ProxySocket, when set, is a unix socket the init relays a loopback
	// TCP port to; the command gets HTTP(S)_PROXY pointing at that port.
	ProxySocket string `json:"proxy_socket,omitempty"`
	// ParentPID is the process that started the init: if it is gone
	// already, the init does not start the command.
	ParentPID int `json:"ppid,omitempty"`
	// Seccomp, when set, is the socket filter the command gets.
	Seccomp *seccompSpec `json:"seccomp,omitempty"`
	// RelayFD, when set, is the init's end of the loopback relay
	// (relay_linux.go).
	RelayFD int `json:"relay_fd,omitempty"`
	// Limits, when set, are the rlimits the command gets.
	Limits *initLimits `json:"limits,omitempty"`
}

// LandlockRules are the accesses a Landlock-confined command keeps.
type LandlockRules struct {
	ABI int `json:"abi"`
	// Write are the paths beneath which writes are allowed (for files:
	// writing and truncating them only).
	Write []string `json:"write"`
	// Read and Hide, when set, confine reading files: to beneath Read and
	// everything but Hide (readGrants); both empty leave reading alone.
	Read []string `json:"read,omitempty"`
	Hide []string `json:"hide,omitempty"`
	// NoNet restricts TCP connects to ConnectPorts (ABI 4 and later).
	NoNet        bool  `json:"no_net,omitempty"`
	ConnectPorts []int `json:"connect_ports,omitempty"`
	// PrivateProc keeps the command out of every process's /proc/PID,
	// its own included: reading /proc is granted only beneath its
	// machine-wide entries (procShared), found by the init. Plan sets it
	// for every process; Odin reads /proc for them where it must
	// (Process.SignalForeground, KillTrees).
	PrivateProc bool `json:"private_proc,omitempty"`
}

// devFiles are the device files a command may write without bubblewrap's
// minimal /dev: enough for `> /dev/null`, nothing that reaches a
// terminal.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/urandom"}

func proxyEnv(url string) []string {
	return []string{"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
		"ALL_PROXY=" + url, "all_proxy=" + url, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"}
}

// Launch prepares plan to run: it starts the plan's proxy, opens the
// pipes bubblewrap reads (--info-fd 3, --seccomp 4) and builds the
// exec.Cmd, which the caller starts (see Process). It is the thin half of
// Command; plan must come from this Launcher's Plan.
func (l *Launcher) Launch(ctx context.Context, plan Plan) (*Process, error) {
	l = l.get()
	if len(plan.Command) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	p := &Process{exe: l.exe, probeRecord: l.opts.ProbeRecord}
	if plan.Write {
		p.git = newGitGuard(plan.GitGuard, &l.repos, plan.Repos)
	}
	if err := l.launch(ctx, p, plan); err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

func (l *Launcher) launch(ctx context.Context, p *Process, plan Plan) error {
	if len(plan.Proxy) > 0 {
		px, err := startProxy(plan.Proxy, plan.Kind == KindBubblewrap)
		if err != nil {
			return err
		}
		p.proxy = px
	}
	path, argv, env, err := plan.cmdline(launchValuesNow(p.proxy))
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Args = argv
	cmd.Dir = plan.Dir
	cmd.Env = env
	p.Cmd = cmd
	switch {
	case plan.Kind == KindBubblewrap:
		// bwrap reports the PID of the namespace's init on --info-fd, so
		// that Release can wait until the namespace (everything in it) is
		// gone: bwrap itself exits as soon as the command does, before the
		// kernel has finished killing the rest.
		infoR, infoW, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		p.infoR, p.infoW = infoR, infoW
		p.nsReady = make(chan struct{})
		track(p)
		cmd.ExtraFiles = []*os.File{infoW}
		if plan.Seccomp == SeccompByBwrap {
			r, prog, err := filterPipe(plan.AllowUnix)
			if err != nil {
				return err
			}
			p.seccompR, p.seccompProg = r, prog
			cmd.ExtraFiles = append(cmd.ExtraFiles, r)
		}
		if plan.LimitsByBlock() {
			if len(cmd.ExtraFiles) != plan.blockFD()-3 {
				return errors.New("sandbox: limits: unexpected descriptor layout")
			}
			if err := p.blockForLimits(plan.Limits); err != nil {
				return err
			}
		}
		// After blockForLimits: readInfo reads what it set.
		go p.readInfo()
		if plan.Relay {
			if len(cmd.ExtraFiles) != relayFD-3 {
				return errors.New("sandbox: loopback relay: unexpected descriptor layout")
			}
			rc, child, err := newRelayPair()
			if err != nil {
				return err
			}
			p.relay = rc
			cmd.ExtraFiles = append(cmd.ExtraFiles, child)
		}
		cmd.SysProcAttr = sessionAttr(syscall.SIGKILL)
		// Killing the namespace's init kills everything in it; bwrap dies
		// with its group.
		cmd.Cancel = p.Kill
	case plan.InitPath == "":
		// Unconfined and without the helper: the process group is all
		// that can be killed.
		cmd.SysProcAttr = sessionAttr(syscall.SIGTERM)
		cmd.Cancel = killGroup(cmd)
	default:
		cmd.SysProcAttr = sessionAttr(syscall.SIGTERM)
		// The helper kills the whole tree on SIGTERM, setsid escapees
		// included; SIGKILL would leave them behind.
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	}
	return nil
}

// grantBeneath returns the paths that together cover dir except the
// protected paths inside it: dir itself when none is inside, else its
// entries, recursing into those that contain a protected path. Landlock
// only grants, never denies beneath a grant, so this is how .git stays
// read-only inside a writable root; the price is that dir itself gets no
// rule (nothing can be created or removed directly in it).
//
// A symbolic link among the entries gets no rule: Landlock would put it
// on the link's target (the rule's file is opened following links), and a
// link the project holds — a repository can commit one — may lead
// anywhere, to ~/.bashrc for writing or to a denied key for reading. What
// it leads to is granted, or not, where it lies.
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
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
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

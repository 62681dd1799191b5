package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/odin-code/odin/internal/readdeny"
)

// Mode is the user's choice of sandbox (permissions.sandbox).
type Mode string

// Sandbox modes.
const (
	// ModeAuto uses bubblewrap, else Landlock, else runs unconfined with a
	// warning.
	ModeAuto Mode = "auto"
	// ModeBubblewrap uses bubblewrap and refuses commands without it.
	ModeBubblewrap Mode = "bubblewrap"
	// ModeLandlock forces the Landlock fallback (tests use it).
	ModeLandlock Mode = "landlock"
	// ModeRequired is auto, but refuses commands when no sandbox works.
	ModeRequired Mode = "required"
	// ModeOff runs commands unconfined (the environment is still scrubbed
	// and the process tree still dies with the command).
	ModeOff Mode = "off"
)

// Kind is the confinement actually in force.
type Kind string

// Kinds of confinement.
const (
	KindBubblewrap Kind = "bubblewrap"
	KindLandlock   Kind = "landlock"
	KindNone       Kind = "none"
)

// ErrNoSandbox is returned by Command when the mode requires a sandbox that
// is not available here.
var ErrNoSandbox = errors.New("sandbox: no sandbox available")

// Options configure a Launcher. Paths should be absolute.
type Options struct {
	// Mode chooses the sandbox; empty means auto.
	Mode Mode
	// Root is the project root: writable in edit mode.
	Root string
	// AddDirs are further directories writable in edit mode (--add-dir,
	// permissions.additional_dirs).
	AddDirs []string
	// Protected are paths kept read-only although they lie inside a
	// writable directory (Odin's user config and state directories). The
	// root's .git (and the gitdir a .git file names), .odin, odin.yaml and
	// odin.yml are always protected.
	Protected []string
	// CacheDir is this project's private build cache (under Odin's state
	// directory), writable in every mode. Empty means no cache
	// redirection.
	CacheDir string
	// PassEnv are further variable names (or NAME_* prefixes) passed to
	// children; secrets are scrubbed even when listed.
	PassEnv []string
	// SecretEnv are variable names that never reach a child, beyond the
	// secret-looking patterns (the providers' api_key_env).
	SecretEnv []string
	// Domains are the hosts every sandboxed command may reach through the
	// proxy; AgentDomains adds per agent. "*.example.com" matches the
	// subdomains of example.com.
	Domains      []string
	AgentDomains map[string][]string
	// NoNetwork names agents whose commands reach no host at all, not
	// even Domains (an agent definition's sandbox.network: off).
	NoNetwork map[string]bool
	// AllowUnixSockets are the pathname unix sockets commands may
	// connect to (permissions.network.allow_unix_sockets: the user's
	// config, a project's only once trusted); AgentUnixSockets adds per
	// agent. Any entry lets the command open AF_UNIX sockets at all (see
	// Sockets).
	AllowUnixSockets []string
	AgentUnixSockets map[string][]string
	// Environ returns the environment to filter; default os.Environ.
	Environ func() []string
	// Executable is the path of the odin binary used as the in-sandbox
	// init; default os.Executable().
	Executable string
	// Bwrap is the bubblewrap program; default "bwrap" from PATH.
	Bwrap string
	// DenyRead is the read deny list; bubblewrap hides the denied paths
	// from every command. Nil hides nothing.
	DenyRead *readdeny.Rules
	// Limits bound every process tree launched (permissions.sandbox_limits);
	// zero fields bound nothing.
	Limits Limits
	// ProbeLandlock reports the kernel's Landlock support; default Probe.
	// Tests replace it to simulate a kernel without Landlock.
	ProbeLandlock func() LandlockStatus
	// ProbeRecord is a file (in Odin's state directory) where a passed
	// bwrap probe is recorded for the next processes on this host (see
	// probecache.go). Empty probes in every process.
	ProbeRecord string
}

// Status says which sandbox a Launcher uses and why.
type Status struct {
	Mode Mode
	Kind Kind
	// Detail describes the kind (the Landlock ABI, the bwrap path).
	Detail string
	// Reason says why a stronger sandbox is not in use; empty with
	// bubblewrap.
	Reason string
	// Refuse is true when the mode demands a sandbox that is missing:
	// Command then fails with ErrNoSandbox.
	Refuse bool
}

func (s Status) String() string {
	switch {
	case s.Refuse:
		return fmt.Sprintf("no sandbox (permissions.sandbox: %s refuses to run commands): %s", s.Mode, s.Reason)
	case s.Kind == KindNone && s.Mode == ModeOff:
		return "no sandbox: permissions.sandbox is off"
	case s.Kind == KindNone:
		return "no sandbox: " + s.Reason
	case s.Reason != "":
		return fmt.Sprintf("%s (%s; fallback because %s)", s.Kind, s.Detail, s.Reason)
	}
	return fmt.Sprintf("%s (%s)", s.Kind, s.Detail)
}

// Degraded reports whether commands run with less than bubblewrap
// although the user did not turn the sandbox off.
func (s Status) Degraded() bool { return s.Kind != KindBubblewrap && s.Mode != ModeOff }

// Spec is one process to launch.
type Spec struct {
	// Args is the program and its arguments (e.g. bash -c SCRIPT).
	Args []string
	// Dir is the working directory; default the root.
	Dir string
	// Env are entries added after the filtered environment (Odin's own
	// settings: ODIN=1, git hardening...). They are not filtered.
	Env []string
	// Write makes the root and AddDirs writable (edit mode). Ask and plan
	// mode commands and Odin's read-only git calls leave it false.
	Write bool
	// Agent selects AgentDomains.
	Agent string
	// Visible are further files or directories to keep readable although
	// they lie under /tmp, which bubblewrap replaces with a private one
	// (an MCP server's program); paths elsewhere are readable already and
	// are ignored.
	Visible []string
	// Writable are further directories this process may write whatever
	// Write says (an MCP server's declared directories and its data
	// directory). They must exist. Protected paths inside them stay
	// read-only, unless the directory lies inside a protected path itself
	// (a data directory under Odin's state directory). Only Odin's own
	// code sets them, from the user's configuration.
	Writable []string
	// Network is NetworkProxy (the default) or NetworkFull. Only Odin's
	// own code sets it, for processes the user configured (MCP servers);
	// a model's command line never chooses it.
	Network Network
	// UnixSockets lets this process create unix sockets (the socket filter
	// refuses them otherwise) without binding any host socket back: the
	// runtime directories stay hidden. Only Odin's own code sets it, for
	// odin-browser, whose Chromium listens on one in its private profile
	// (its process singleton) and cannot start without.
	UnixSockets bool
	// LoopbackRelay lets Odin connect to servers the process starts on its
	// private loopback (Process.DialLoopback): under bubblewrap the
	// namespace's init helper connects for Odin (see relay_linux.go).
	// Only Odin's own code sets it, for ShellSession and Python, whose
	// dev servers WebBrowser opens. It opens nothing the other way.
	LoopbackRelay bool
	// Confined refuses the process where no sandbox works (auto mode's
	// unconfined fallback) instead of running it plainly: Odin's helper
	// processes and MCP servers never run outside a sandbox. Only
	// permissions.sandbox: off, the user's own choice for every command,
	// runs them unconfined.
	Confined bool
}

// Network is how a launched process reaches the network.
type Network int

const (
	// NetworkProxy: no network except the allowed domains through the
	// per-process proxy (none when no domain is allowed).
	NetworkProxy Network = iota
	// NetworkFull: the host's network, unrestricted (bubblewrap shares
	// the network namespace; Landlock leaves TCP alone). The file system
	// confinement is unchanged.
	NetworkFull
)

// Launcher starts every child process of a session inside the sandbox.
// It is safe for concurrent use; the probe runs once, on first use.
type Launcher struct {
	opts   Options
	once   sync.Once
	status Status
	abi    int
	exe    string
	bwrap  string
	// bwrapSize: bwrap knows --size, which bounds the private /tmp.
	bwrapSize bool
	noInit    bool
	// homeModCache is the user's Go module cache, offered read-only to
	// children as a GOPROXY.
	homeModCache string
	// homeGoCache is the user's Go build cache, offered read-only to
	// sandboxed go commands through GOCACHEPROG (goCacheProgEnv).
	homeGoCache string
	// hostRun replaces hostRunDirs when set (golden tests).
	hostRun []string
	// repos caches the walk for git directories planted beneath the
	// writable directories (gitguard.go).
	repos gitTree
}

// New returns a Launcher. It does not probe yet.
func New(opts Options) *Launcher {
	if opts.Mode == "" {
		opts.Mode = ModeAuto
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.Bwrap == "" {
		opts.Bwrap = "bwrap"
	}
	return &Launcher{opts: opts}
}

// off is the launcher a nil *Launcher stands for: no confinement, a
// scrubbed environment, and no init helper (a test binary that does not
// call Main must not be re-executed as one): only the process group is
// killed.
var off = &Launcher{opts: Options{Mode: ModeOff, Environ: os.Environ}, noInit: true}

func (l *Launcher) get() *Launcher {
	if l == nil {
		return off
	}
	return l
}

// Status probes (once) and reports the sandbox in force.
func (l *Launcher) Status() Status {
	l = l.get()
	l.once.Do(l.probe)
	return l.status
}

func (l *Launcher) probe() {
	st := Status{Mode: l.opts.Mode}
	l.exe = l.opts.Executable
	if l.exe == "" && !l.noInit {
		if exe, err := os.Executable(); err == nil {
			l.exe, _ = filepath.EvalSymlinks(exe)
		}
	}
	l.homeModCache = goModCache(l.opts.Environ())
	l.homeGoCache = userGoCache(l.opts.Environ())
	var bwrapWhy, llWhy string
	if l.opts.Mode != ModeOff && l.opts.Mode != ModeLandlock {
		l.bwrap, bwrapWhy = probeBwrapRecorded(l.opts.Bwrap, l.opts.ProbeRecord)
		if bwrapWhy == "" {
			l.bwrapSize = l.opts.Limits.TmpSize > 0 && bwrapHasSize(l.bwrap)
			st.Kind, st.Detail = KindBubblewrap, l.bwrap
			l.status = st
			return
		}
	}
	if l.opts.Mode == ModeBubblewrap {
		st.Kind, st.Reason, st.Refuse = KindNone, bwrapWhy, true
		l.status = st
		return
	}
	if l.opts.Mode != ModeOff {
		probe := l.opts.ProbeLandlock
		if probe == nil {
			probe = Probe
		}
		ll := probe()
		if ll.Available && l.exe == "" {
			ll = LandlockStatus{Reason: "cannot find Odin's own binary to run the Landlock helper"}
		}
		if ll.Available {
			l.abi = ll.ABI
			st.Kind, st.Detail = KindLandlock, fmt.Sprintf("Landlock ABI %d", ll.ABI)
			if l.opts.Mode != ModeLandlock {
				st.Reason = "bubblewrap is unusable: " + bwrapWhy
			}
			l.status = st
			return
		}
		llWhy = ll.Reason
	}
	st.Kind = KindNone
	switch l.opts.Mode {
	case ModeOff:
	case ModeLandlock:
		st.Reason, st.Refuse = llWhy, true
	default:
		st.Reason = fmt.Sprintf("bubblewrap is unusable (%s) and so is Landlock (%s)", bwrapWhy, llWhy)
		st.Refuse = l.opts.Mode == ModeRequired
	}
	l.status = st
}

// probeBwrap finds bwrap and checks that it can create the namespaces.
func probeBwrap(name string) (string, string) { return probeBwrapRecorded(name, "") }

// probeBwrapRecorded is probeBwrap believing a pass recorded in record
// for this host, and recording its own pass there (see probecache.go).
func probeBwrapRecorded(name, record string) (string, string) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", "bwrap is not installed (install the bubblewrap package)"
	}
	// A worker opens a launcher per session it activates, and the probe
	// is a sandboxed process of its own (namespaces made and torn down):
	// a bwrap that worked once in this process is taken to work. A
	// failure is not remembered, so a fixed host is seen at the next one.
	if _, ok := bwrapWorks.Load(path); ok {
		return path, ""
	}
	t, err := exec.LookPath("true")
	if err != nil {
		return "", "no `true` program to probe bwrap with"
	}
	var fingerprint string
	if record != "" {
		fingerprint = probeFingerprint(path, t)
		if pass, size := recordedPass(record, fingerprint, time.Now()); pass {
			bwrapWorks.Store(path, true)
			bwrapSizes.Store(path, size)
			return path, ""
		}
	}
	out, err := exec.Command(path, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
		"--proc", "/proc", "--dev", "/dev", "--", t).CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("bwrap cannot create namespaces here (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	bwrapWorks.Store(path, true)
	if record != "" {
		// Asked now, once per record, so that the processes believing
		// the record need not run bwrap at all.
		recordPass(record, fingerprint, bwrapHasSize(path), time.Now())
	}
	return path, ""
}

// bwrapWorks holds the bwrap paths whose probe passed in this process.
var bwrapWorks sync.Map

// bwrapSizes holds, per bwrap path, whether it knows --size (bubblewrap
// 0.8 and later): an older one would refuse every command given it.
var bwrapSizes sync.Map

func bwrapHasSize(path string) bool {
	if v, ok := bwrapSizes.Load(path); ok {
		return v.(bool)
	}
	out, _ := exec.Command(path, "--help").CombinedOutput()
	has := strings.Contains(string(out), "--size")
	bwrapSizes.Store(path, has)
	return has
}

// Process is a launched command: its exec.Cmd plus the proxy serving it.
// Set Stdin, Stdout and Stderr on Cmd, then Start and Wait; call Release
// after Wait. Do not change Cmd's Env, SysProcAttr or Cancel.
type Process struct {
	*exec.Cmd
	proxy        *proxy
	infoR, infoW *os.File // bwrap's --info-fd
	closeInfoW   sync.Once
	// nsReady is closed once bwrap reported its namespace's init (then
	// in ns) or cannot any more; nil without bwrap.
	nsReady chan struct{}
	ns      *nsHandle
	// reported is set (before nsReady closes) when bwrap reported its
	// namespace's init: it made the namespaces and the command ran.
	reported bool
	// probeRecord is the Launcher's Options.ProbeRecord.
	probeRecord string
	seccompR    *os.File // bwrap's --seccomp
	exe         string   // Odin's own binary, for a handoff
	// seccompProg is the filter seccompR holds, for a handoff.
	seccompProg []byte
	released    bool
	// relay is Odin's end of the loopback relay (Spec.LoopbackRelay under
	// bubblewrap); nil otherwise.
	relay   *relayClient
	git     *gitGuard // write-mode commands: .git dirs they may create
	removed []string
	// blockR and blockW are bwrap's --block-fd (Plan.LimitsByBlock):
	// readInfo sets limits on the process bwrap reports, then lets it
	// go on by closing blockW; nil otherwise.
	blockR, blockW *os.File
	limits         *initLimits
}

// infoWait bounds the wait for bwrap to report its namespace's init, which
// it does within moments of starting, before it lets the init go on.
const infoWait = 2 * time.Second

// readInfo reads bwrap's report of its namespace's init as soon as bwrap
// writes it and pins that process (openNS) while it is certainly alive:
// bwrap writes the report before it lets the init go on.
func (p *Process) readInfo() {
	defer close(p.nsReady)
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if json.NewDecoder(p.infoR).Decode(&info) == nil && info.ChildPID > 0 {
		p.reported = true
		p.ns = openNS(info.ChildPID)
		if p.blockW != nil {
			p.setLimitsAndGo(info.ChildPID)
		}
	}
	// Without a report blockW stays open until Release: closing it would
	// let a child bwrap did start go on without its limits (bwrap reads
	// end of file as the go-ahead); it dies with bwrap (--die-with-parent).
}

// namespace returns bwrap's namespace init, nil for a process that is not
// bwrap or whose bwrap said nothing in time. Call it after Start.
func (p *Process) namespace() *nsHandle {
	if p.nsReady == nil {
		return nil
	}
	// bwrap holds its own copy now: the read ends when bwrap closes it.
	p.closeInfoW.Do(func() { _ = p.infoW.Close() })
	t := time.NewTimer(infoWait)
	defer t.Stop()
	select {
	case <-p.nsReady:
		return p.ns
	case <-t.C:
		return nil
	}
}

// live are the bubblewrap processes prepared and not yet released, for
// Shutdown.
var live struct {
	mu    sync.Mutex
	procs map[*Process]struct{}
}

func track(p *Process) {
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.procs == nil {
		live.procs = map[*Process]struct{}{}
	}
	live.procs[p] = struct{}{}
}

func untrack(p *Process) {
	live.mu.Lock()
	defer live.mu.Unlock()
	delete(live.procs, p)
}

// Shutdown kills the sandbox of every command still running: call it when
// Odin exits. bwrap dies with Odin, but a namespace init it has not yet
// let go on survives it, blocked for good; a command whose cancel is still
// on its way when Odin exits would leave one.
func Shutdown() {
	live.mu.Lock()
	procs := make([]*Process, 0, len(live.procs))
	for p := range live.procs {
		procs = append(procs, p)
	}
	live.mu.Unlock()
	deadline := time.NewTimer(infoWait)
	defer deadline.Stop()
	for _, p := range procs {
		select {
		case <-p.nsReady:
		case <-deadline.C:
			return
		}
		if p.ns != nil {
			// Not bwrap's pid: bwrap may be gone, its pid reused; the
			// pidfd names the init whatever happened.
			p.ns.kill(0)
		}
	}
}

// Kill kills the process and everything it started, at once. Under
// bubblewrap the namespace's init is killed first: bwrap's own death
// leaves behind an init it had not yet let go on (one cancelled in its
// first moments), blocked for good outside the process group. Call it
// after Start; safe more than once. It is the process's Cancel.
func (p *Process) Kill() error {
	if p == nil || p.Cmd == nil || p.Process == nil {
		return nil
	}
	if ns := p.namespace(); ns != nil {
		ns.kill(p.Process.Pid)
	}
	return syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
}

// Terminate asks the process to stop: SIGTERM to its group, which the init
// helper answers by killing everything the command started. Under
// bubblewrap it is Kill: the command is the namespace's init, which gets no
// signal it has no handler for, and bwrap's death always took the
// namespace down at once.
func (p *Process) Terminate() error {
	if p == nil || p.Cmd == nil || p.Process == nil {
		return nil
	}
	if p.nsReady != nil {
		return p.Kill()
	}
	return syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
}

// Release kills what is left of the process's sandbox, waits (briefly)
// until everything the process started is gone and stops its network
// proxy. Call it after Wait; safe on a nil Process and more than once.
func (p *Process) Release() {
	if p == nil || p.released {
		return
	}
	p.released = true
	if p.relay != nil {
		p.relay.close()
	}
	if p.seccompR != nil {
		_ = p.seccompR.Close()
	}
	if p.blockR != nil {
		_ = p.blockR.Close()
	}
	if p.proxy != nil {
		p.proxy.Close()
	}
	if p.infoW != nil {
		defer untrack(p)
		p.closeInfoW.Do(func() { _ = p.infoW.Close() })
		_ = p.infoR.SetReadDeadline(time.Now().Add(time.Second))
		<-p.nsReady
		_ = p.infoR.Close()
		if !p.reported && p.ProcessState != nil && !p.ProcessState.Success() {
			// bwrap exited without making the namespaces: whatever
			// probe said it works (this process's, a recorded one) is
			// not believed any more.
			bwrapWorks.Delete(p.Path)
			forgetPass(p.probeRecord)
		}
		if p.ns != nil {
			// However the command ended, nothing of its namespace
			// outlives it; bwrap itself exits as soon as the command
			// does, before the kernel has finished killing the rest.
			bwrap := 0
			if p.Process != nil {
				bwrap = p.Process.Pid
			}
			p.ns.kill(bwrap)
			p.ns.wait(2 * time.Second)
			p.ns.close()
		}
		if p.blockW != nil {
			_ = p.blockW.Close()
		}
	}
	// Everything the command started is gone: nothing can recreate what
	// the sweep removes.
	p.removed = p.git.sweepNow()
}

// SweepGit checks now what Release checks when the process ends (see
// gitGuard) and returns what it removed, for a process that runs many
// commands (ShellSession's shell): the user's git may run in the project
// while the session lives. Release reports only what is planted after the
// last SweepGit. A process that may not write returns nil.
func (p *Process) SweepGit() []string {
	if p == nil {
		return nil
	}
	return p.git.sweepNow()
}

// Removed lists the .git directories the command planted and Release
// removed, each with the reason (see gitGuard). Call it after Release.
func (p *Process) Removed() []string {
	if p == nil {
		return nil
	}
	return p.removed
}

// waitGone polls until pid has exited (or is a zombie), at most d.
func waitGone(pid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		s := string(st)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X') {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// DialLoopback connects to addr, a loopback address and port, inside the
// process's network namespace: to a server the process started on its
// private loopback. It returns ErrNoRelay (wrapped) when the process has
// no relay: launched without Spec.LoopbackRelay, without a namespace of
// its own (the Landlock fallback, no sandbox: its servers are on the
// host's loopback), or gone. Nothing listening is an error matching
// syscall.ECONNREFUSED. Call it after Start; safe for concurrent use.
func (p *Process) DialLoopback(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
	if p == nil || p.relay == nil {
		return nil, ErrNoRelay
	}
	return p.relay.dial(ctx, addr)
}

// Blocked lists the hosts the proxy refused this process, sorted.
func (p *Process) Blocked() []string {
	if p == nil || p.proxy == nil {
		return nil
	}
	return p.proxy.Blocked()
}

// Command prepares spec to run in the sandbox: Plan, then Launch. The
// process starts in a new session (no controlling terminal), dies with
// Odin, gets the filtered environment, and everything it starts is killed
// when it ends or is cancelled through ctx. It returns ErrNoSandbox
// (wrapped, with the reason) when the mode refuses to run unconfined.
func (l *Launcher) Command(ctx context.Context, spec Spec) (*Process, error) {
	plan, err := l.Plan(spec)
	if err != nil {
		return nil, err
	}
	return l.Launch(ctx, plan)
}

func (l *Launcher) domains(agent string) []string {
	if agent != "" && l.opts.NoNetwork[agent] {
		return nil
	}
	d := slices.Clone(l.opts.Domains)
	d = append(d, l.opts.AgentDomains[agent]...)
	slices.Sort(d)
	return slices.Compact(d)
}

// killGroup makes cancelling cmd kill its process group at once.
func killGroup(cmd *exec.Cmd) func() error {
	return func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// protectedPaths are the existing paths kept read-only inside the
// writable directories: the root's .git (and the gitdir a .git file
// names), .odin and odin.yaml, each added directory's .git,
// Options.Protected, and extra (the repositories nested in them).
func (l *Launcher) protectedPaths(writable []string, extra ...string) []string {
	var cands []string
	if l.opts.Root != "" {
		for _, n := range []string{".git", ".odin", "odin.yaml", "odin.yml"} {
			cands = append(cands, filepath.Join(l.opts.Root, n))
		}
		if gd := gitDirOf(l.opts.Root); gd != "" {
			cands = append(cands, gd)
		}
	}
	// An added directory's repository is git's as much as the project's:
	// its config and hooks run at the user's next git command there.
	for _, d := range l.opts.AddDirs {
		if d == "" {
			continue
		}
		cands = append(cands, filepath.Join(d, ".git"))
		if gd := gitDirOf(d); gd != "" {
			cands = append(cands, gd)
		}
	}
	cands = append(cands, l.opts.Protected...)
	for _, e := range extra {
		// A writable directory laid out as a bare repository was so
		// before the command: keeping it all read-only is no answer.
		if !slices.Contains(writable, e) {
			cands = append(cands, e)
		}
	}
	var out []string
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		inside := false
		for _, w := range writable {
			if within(w, real) {
				inside = true
				break
			}
		}
		if inside && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}

// gitDirOf returns the directory a .git file ("gitdir: PATH", worktrees
// and submodules) points to, or "".
func gitDirOf(root string) string {
	data, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return ""
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	s = strings.TrimSpace(s)
	if !filepath.IsAbs(s) {
		s = filepath.Join(root, s)
	}
	return filepath.Clean(s)
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// writableDirs are the root and AddDirs, resolved; missing ones are left out.
func (l *Launcher) writableDirs() []string {
	var out []string
	for _, d := range append([]string{l.opts.Root}, l.opts.AddDirs...) {
		if d == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}

// cacheDirs creates the private cache and returns its path ("" without
// one).
func (l *Launcher) cacheDir() string {
	if l.opts.CacheDir == "" {
		return ""
	}
	for _, sub := range []string{"go-build", "gomod", "npm", "xdg", "pip", "tmp"} {
		_ = os.MkdirAll(filepath.Join(l.opts.CacheDir, sub), 0o700)
	}
	real, err := filepath.EvalSymlinks(l.opts.CacheDir)
	if err != nil {
		return ""
	}
	return real
}

// CacheDirFor is the private build cache of the project at root under
// Odin's state directory: one per project, so a command in one project
// cannot plant build outputs another uses.
func CacheDirFor(stateDir, root string) string {
	if stateDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(stateDir, "sandbox", filepath.Base(root)+"-"+hex.EncodeToString(sum[:6]))
}

func goModCache(environ []string) string {
	get := func(k string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(environ[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	m := get("GOMODCACHE")
	if m == "" {
		if p := get("GOPATH"); p != "" {
			m = filepath.Join(filepath.SplitList(p)[0], "pkg", "mod")
		} else if h := get("HOME"); h != "" {
			m = filepath.Join(h, "go", "pkg", "mod")
		}
	}
	if m == "" {
		return ""
	}
	if fi, err := os.Stat(filepath.Join(m, "cache", "download")); err != nil || !fi.IsDir() {
		return ""
	}
	return m
}

// Confinement describes what a command launched in edit mode may do, for
// `odin doctor`.
type Confinement struct {
	// Writable are the directories writable in edit mode (read-only in ask
	// and plan mode).
	Writable []string
	// Protected stay read-only inside them.
	Protected []string
	// Cache is the project's private build cache.
	Cache string
	// GoCacheLower is the user's Go build cache, read beneath the private
	// one through GOCACHEPROG; "" when not offered.
	GoCacheLower string
	// Domains are reachable through the proxy (all agents).
	Domains []string
	// AgentDomains are the per-agent additions.
	AgentDomains map[string][]string
	// Env are the variable names passed from Odin's environment.
	Env []string
	// Sockets is the unix socket rule.
	Sockets Sockets
	// Limits are the resource limits of each command.
	Limits Limits
}

// Describe reports the confinement of edit-mode commands.
func (l *Launcher) Describe() Confinement {
	l = l.get()
	w := l.writableDirs()
	l.Status() // probes: the Go cache offered depends on Odin's binary
	return Confinement{Writable: w, Protected: l.protectedPaths(w), Cache: l.opts.CacheDir, GoCacheLower: l.goCacheLower(l.cacheDir()),
		Domains: l.domains(""), AgentDomains: l.opts.AgentDomains, Env: l.EnvNames(),
		Sockets: l.describeSockets(l.Status()), Limits: l.opts.Limits}
}

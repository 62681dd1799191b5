package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Plan is how one Spec runs: the confinement, the whole command line,
// the environment, the socket filter and who installs it, the Landlock
// rule set and the proxy's domains. Launcher.Plan computes it without
// starting anything, so it can be read and pinned (testdata/*.golden);
// Launcher.Launch executes it. Command is the two in one step.
//
// The only values a plan leaves open are those of the running launch:
// the proxy's socket or port and Odin's own PID (see cmdline).
type Plan struct {
	// Kind is the confinement the command gets.
	Kind Kind
	// Dir is the working directory.
	Dir string
	// Env is the child's environment: the filtered one, the private
	// caches, then Spec.Env. The proxy's variables are added at launch.
	Env []string
	// Command is what runs in the end (Spec.Args).
	Command []string
	// Bwrap is bubblewrap's path (KindBubblewrap).
	Bwrap string
	// BwrapArgs are bubblewrap's options before --chdir: namespaces, the
	// mount view (binds in order), the deny list. The launcher adds the
	// file descriptors (--seccomp, --info-fd) and the proxy's socket.
	BwrapArgs []string
	// InitPath is where the init helper is executed from (Odin's binary,
	// or its bind inside bubblewrap); "" runs Command directly.
	InitPath string
	// Landlock is the rule set the init confines itself with (the
	// fallback); nil without Landlock.
	Landlock *LandlockRules
	// Seccomp says who installs the socket filter, if anyone, and
	// AllowUnix whether it lets AF_UNIX sockets through.
	Seccomp   SeccompBy
	AllowUnix bool
	// Proxy are the domains the per-process proxy allows; empty: no
	// proxy.
	Proxy []string
	// Write is set for edit-mode commands: the .git directories they
	// plant in GitGuard (the writable directories) are swept afterwards.
	Write    bool
	GitGuard []string
	// Repos are the git directories nested beneath GitGuard before the
	// command (gitguard.go): kept read-only like the root's .git.
	Repos []string
	// Relay: the init helper serves a loopback relay (Spec.LoopbackRelay;
	// bubblewrap only, where the process has a network namespace of its
	// own).
	Relay bool
	// Limits are the rlimits the command starts with; nil without any.
	// The init helper sets them where it runs; under bubblewrap without
	// it, Odin sets them on bwrap's child while it waits on --block-fd
	// (LimitsByBlock).
	Limits *initLimits
}

// SeccompBy says who installs a command's socket filter.
type SeccompBy int

// Who installs the socket filter.
const (
	// SeccompNone: no filter (no sandbox, or none on this architecture).
	SeccompNone SeccompBy = iota
	// SeccompByBwrap: bubblewrap reads the compiled filter from a pipe
	// (--seccomp) and installs it just before the command.
	SeccompByBwrap
	// SeccompByInit: Odin's init helper installs it on the thread that
	// starts the command (it relays the proxy over a unix socket first).
	SeccompByInit
)

func (s SeccompBy) String() string {
	switch s {
	case SeccompByBwrap:
		return "bwrap"
	case SeccompByInit:
		return "init"
	}
	return "none"
}

// Plan computes how spec would run, starting nothing: it resolves paths,
// lists the directories Landlock grants need and creates the private
// build cache, and otherwise only reads. It returns ErrNoSandbox (wrapped,
// with the reason) when the mode refuses to run unconfined.
func (l *Launcher) Plan(spec Spec) (Plan, error) {
	l = l.get()
	st := l.Status()
	if st.Refuse {
		return Plan{}, fmt.Errorf("%w: %s", ErrNoSandbox, st)
	}
	if spec.Confined && st.Kind == KindNone && st.Mode != ModeOff {
		return Plan{}, fmt.Errorf("%w: %s would run unconfined, and Odin runs it only in a sandbox: %s; install bubblewrap (apt-get install bubblewrap) or use a kernel with Landlock",
			ErrNoSandbox, programName(spec.Args), st.Reason)
	}
	if spec.UnixSockets && st.Kind == KindLandlock {
		// Landlock cannot hide a path, and connect(2) to a socket needs
		// no right it confines: a process that may open unix sockets
		// reaches every pathname socket of the host (the X server's,
		// docker's, ssh-agent's). For odin-browser, which runs Chromium
		// without its own sandbox on untrusted pages, that is an escape.
		return Plan{}, fmt.Errorf("%w: %s needs unix sockets, which the Landlock fallback cannot keep to its own (every socket of the host would be open to it); install bubblewrap (apt-get install bubblewrap)",
			ErrNoSandbox, programName(spec.Args))
	}
	if len(spec.Args) == 0 {
		return Plan{}, errors.New("sandbox: empty command")
	}
	if spec.Dir == "" {
		spec.Dir = l.opts.Root
	}
	p := Plan{Kind: st.Kind, Dir: spec.Dir, Env: l.childEnv(spec), Command: slices.Clone(spec.Args), Write: spec.Write}
	if l.exe != "" {
		// Odin's binary sets them (bwrap cannot): without it the command
		// runs without rlimits.
		p.Limits = l.opts.Limits.forInit()
	}
	if spec.Write {
		p.GitGuard = l.writableDirs()
		p.Repos = l.repos.scan(p.GitGuard)
	}
	p.Proxy = l.domains(spec.Agent)
	if spec.Network == NetworkFull {
		p.Proxy = nil // no proxy: the process reaches the network itself
	}
	if st.Kind == KindBubblewrap {
		return p, l.planBwrap(&p, spec)
	}
	l.planInit(&p, spec, st.Kind == KindLandlock)
	return p, nil
}

// planBwrap plans the bubblewrap command line: a read-only view of the
// whole file system with the writable directories bound back read-write
// and the protected paths bound read-only again on top, fresh /dev, /proc
// and /tmp, every namespace new (no network), no capabilities.
func (l *Launcher) planBwrap(p *Plan, spec Spec) error {
	p.Bwrap = l.bwrap
	args := []string{"--new-session", "--die-with-parent", "--unshare-all", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	if n := l.opts.Limits.TmpSize; n > 0 && l.bwrapSize {
		// A tmpfs is memory: unbounded, a command filling /tmp fills
		// the machine's memory (half of it, the kernel's default size).
		args = append(args, "--size", strconv.FormatUint(n, 10))
	}
	args = append(args, "--tmpfs", "/tmp")
	if spec.Network == NetworkFull {
		args = append(args, "--share-net")
	}
	sockets := l.unixSockets(spec.Agent)
	args = append(args, socketArgs(spec, sockets, l.runDirs(), l.opts.Environ())...)
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
	protected := l.protectedPaths(append(slices.Clone(writable), granted...), p.Repos...)
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
	sc := l.seccomp(sockets, spec)
	if sc != nil {
		p.AllowUnix = sc.AllowUnix
	}
	// Without Odin's binary there is no relay: the process's servers are
	// out of Odin's reach, which costs a convenience, not the command.
	p.Relay = spec.LoopbackRelay && l.exe != ""
	// The rlimits need no init: Odin sets them on bwrap's child before
	// it lets it exec the command (LimitsByBlock), which saves starting
	// Odin's binary once more for every command. The child is the
	// namespace's PID 1, though, which the kernel's SIGXCPU does not
	// reach (nor SIGXFSZ: the write then just fails with EFBIG): a CPU
	// limit keeps the init, under which the command is a plain process
	// that SIGXCPU stops at the limit, and says why.
	cpu := p.Limits != nil && p.Limits.CPU > 0
	if len(p.Proxy) > 0 || p.Relay || cpu {
		if l.exe == "" {
			return fmt.Errorf("sandbox: cannot find Odin's own binary to relay the network proxy or set the CPU limit")
		}
		// The init relays the proxy over a unix socket (or sets the
		// CPU limit), so bwrap must not filter it: it installs the
		// filter on the thread it starts the command from (see
		// installSocketFilter).
		if !exeBound {
			args = append(args, "--ro-bind", l.exe, innerInit)
		}
		p.InitPath = innerInit
		if sc != nil {
			p.Seccomp = SeccompByInit
		}
	} else if sc != nil {
		// No init: bwrap applies the filter itself, just before it runs
		// the command, which saves starting Odin's binary once more.
		p.Seccomp = SeccompByBwrap
	}
	p.BwrapArgs = args
	return nil
}

// planInit plans a run under Odin's init helper (the Landlock fallback,
// and unconfined runs): the helper confines itself with Landlock when
// landlock is set, becomes a subreaper and kills every descendant when
// the command ends, when it is signalled and when Odin dies. Without
// Odin's binary the command runs directly.
func (l *Launcher) planInit(p *Plan, spec Spec, landlock bool) {
	p.InitPath = l.exe
	if !landlock {
		return
	}
	rules := &LandlockRules{ABI: l.abi}
	hidden := l.landlockHidden()
	// A denied file in a writable directory is split off the write grants
	// as it is off the read grants: a wholesale grant on its directory
	// would let the command overwrite it, and files made beside it could
	// not be read back (see landlockReadGrants).
	protected := append(l.protectedPaths(l.writableDirs(), p.Repos...), hidden...)
	if spec.Write {
		for _, w := range l.writableDirs() {
			rules.Write = append(rules.Write, grantBeneath(w, protected)...)
		}
	}
	granted := resolveDirs(spec.Writable)
	protected = append(l.protectedPaths(append(l.writableDirs(), granted...), p.Repos...), hidden...)
	for _, w := range granted {
		rules.Write = append(rules.Write, grantBeneath(w, protected)...)
	}
	if c := l.cacheDir(); c != "" {
		rules.Write = append(rules.Write, c) // as with bubblewrap
	}
	rules.Write = append(rules.Write, devFiles...)
	rules.Hide, rules.Read = hidden, devReadable
	rules.PrivateProc = true
	rules.NoNet = l.abi >= 4 && spec.Network != NetworkFull
	p.Landlock = rules
	if sc := l.seccomp(l.unixSockets(spec.Agent), spec); sc != nil {
		p.Seccomp, p.AllowUnix = SeccompByInit, sc.AllowUnix
	}
}

// LimitsByBlock reports whether Odin sets the plan's rlimits itself:
// under bubblewrap without the init, on the process bwrap reports on
// --info-fd (the namespace's PID 1, which execs the command: --as-pid-1)
// while it waits on --block-fd, after bwrap has set the sandbox up and
// before the command's first instruction.
func (p Plan) LimitsByBlock() bool {
	return p.Kind == KindBubblewrap && p.InitPath == "" && p.Limits != nil
}

// blockFD is bwrap's --block-fd under LimitsByBlock: after --info-fd (3)
// and --seccomp (4) when bwrap installs the filter.
func (p Plan) blockFD() int {
	if p.Seccomp == SeccompByBwrap {
		return 5
	}
	return 4
}

// launchValues are what a plan leaves open until it is launched.
type launchValues struct {
	// proxySocket is the host path of the proxy's unix socket
	// (bubblewrap); proxyAddr and proxyPort its loopback TCP address
	// (otherwise).
	proxySocket string
	proxyAddr   string
	proxyPort   int
	// ppid is the process starting the init: Odin.
	ppid int
}

// cmdline is the program, its argv (argv[0] included) and environment
// that run the plan with the launch's values v.
func (p Plan) cmdline(v launchValues) (path string, argv, env []string, err error) {
	env = slices.Clone(p.Env)
	if p.Kind == KindBubblewrap {
		var args []string
		if p.Seccomp == SeccompByBwrap {
			args = append(args, "--seccomp", "4") // fd 4: see Launch
		}
		args = append(args, "--info-fd", "3")
		if p.LimitsByBlock() {
			args = append(args, "--block-fd", strconv.Itoa(p.blockFD()))
		}
		args = append(args, p.BwrapArgs...)
		if len(p.Proxy) > 0 {
			args = append(args, "--bind", v.proxySocket, innerProxy)
		}
		args = append(args, "--chdir", p.Dir, "--")
		if p.InitPath != "" {
			var is initSpec
			if len(p.Proxy) > 0 {
				is.ProxySocket = innerProxy
			}
			if p.Relay {
				is.RelayFD = relayFD
			}
			is.Limits = p.Limits
			if p.Seccomp == SeccompByInit {
				is.Seccomp = &seccompSpec{AllowUnix: p.AllowUnix}
			}
			js, err := json.Marshal(is)
			if err != nil {
				return "", nil, nil, fmt.Errorf("sandbox: %w", err)
			}
			args = append(args, p.InitPath, initArg, string(js), "--")
		}
		return p.Bwrap, append(append([]string{p.Bwrap}, args...), p.Command...), env, nil
	}
	var ports []int
	if len(p.Proxy) > 0 {
		env = append(env, proxyEnv("http://"+v.proxyAddr)...)
		ports = []int{v.proxyPort}
	}
	if p.InitPath == "" {
		return p.Command[0], slices.Clone(p.Command), env, nil
	}
	is := initSpec{ParentPID: v.ppid, Limits: p.Limits}
	if p.Landlock != nil {
		rules := *p.Landlock
		rules.ConnectPorts = append(slices.Clone(rules.ConnectPorts), ports...)
		is.Landlock = &rules
	}
	if p.Seccomp == SeccompByInit {
		is.Seccomp = &seccompSpec{AllowUnix: p.AllowUnix}
	}
	js, err := json.Marshal(is)
	if err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	return p.InitPath, append([]string{p.InitPath, initArg, string(js), "--"}, p.Command...), env, nil
}

// launchValuesNow are the values of a launch from this process.
func launchValuesNow(px *proxy) launchValues {
	v := launchValues{ppid: os.Getpid()}
	if px != nil {
		v.proxySocket, v.proxyAddr, v.proxyPort = px.socket, px.tcpAddr, px.tcpPort
	}
	return v
}

// programName names a process in a refusal: its program's base name.
func programName(args []string) string {
	if len(args) == 0 || args[0] == "" {
		return "the process"
	}
	return filepath.Base(args[0])
}

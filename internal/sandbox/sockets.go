package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SocketsKey is the setting that lets commands reach a unix socket.
const SocketsKey = "permissions.network.allow_unix_sockets"

// landlockScopeABI is the first Landlock ABI with scopes (abstract unix
// sockets and signals).
const landlockScopeABI = 6

// seccompSpec tells the init to install the socket filter before it
// starts the command.
type seccompSpec struct {
	// AllowUnix lets AF_UNIX sockets through (the command may reach an
	// allowed socket).
	AllowUnix bool `json:"allow_unix,omitempty"`
}

// unixSockets are the sockets an agent's commands may connect to, cleaned
// and sorted.
func (l *Launcher) unixSockets(agent string) []string {
	var out []string
	for _, s := range append(slices.Clone(l.opts.AllowUnixSockets), l.opts.AgentUnixSockets[agent]...) {
		if filepath.IsAbs(s) {
			out = append(out, filepath.Clean(s))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// runDirs are the candidate runtime directories: the host's, or a test's
// stand-ins, so that a plan does not depend on the machine it is made on.
func (l *Launcher) runDirs() []string {
	if l.hostRun != nil {
		return l.hostRun
	}
	return hostRunDirs
}

// seccomp is the filter a command gets: nil where the architecture has
// none (the status says so).
func (l *Launcher) seccomp(sockets []string, spec Spec) *seccompSpec {
	if !seccompSupported() {
		return nil
	}
	return &seccompSpec{AllowUnix: len(sockets) > 0 || spec.UnixSockets}
}

// hostRunDirs are where a host keeps its runtime directories.
var hostRunDirs = []string{"/run", "/var/run"}

// runtimeDirs are the directories bubblewrap covers with an empty tmpfs:
// where servers of the user and the system keep their sockets (/run,
// /var/run when it is not a link to /run, $XDG_RUNTIME_DIR when it is
// elsewhere), resolved, outermost only. The seccomp filter refuses the
// sockets already; hiding them also keeps their other contents (tokens,
// PID files, /run/secrets) away, and is what still limits a command that
// may open unix sockets because one is allowed.
func runtimeDirs(runDirs, environ []string) []string {
	cands := slices.Clone(runDirs)
	home := ""
	for _, e := range environ {
		if v, ok := strings.CutPrefix(e, "XDG_RUNTIME_DIR="); ok && filepath.IsAbs(v) {
			cands = append(cands, v)
		}
		if v, ok := strings.CutPrefix(e, "HOME="); ok && filepath.IsAbs(v) {
			home = filepath.Clean(v)
			if real, err := filepath.EvalSymlinks(v); err == nil {
				home = real
			}
		}
	}
	var out []string
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		// /tmp is private already; a directory holding the home
		// directory (an odd $XDG_RUNTIME_DIR) would hide the user's
		// toolchains.
		if err != nil || real == "/" || within("/tmp", real) || (home != "" && within(real, home)) {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		if slices.ContainsFunc(out, func(o string) bool { return within(o, real) }) {
			continue
		}
		out = slices.DeleteFunc(out, func(o string) bool { return within(real, o) })
		out = append(out, real)
	}
	return out
}

// etcLinks are the files of /etc that distributions make links into /run:
// systemd-resolved's and NetworkManager's resolv.conf, systemd-machined's
// and container managers' hosts and timezone files.
var etcLinks = []string{"resolv.conf", "hosts", "localtime", "timezone", "machine-id", "mtab"}

// keptPaths are what commands need from the hidden directories, as
// bubblewrap binds (source, destination): the targets of etcLinks
// into them (/etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf on
// systemd-resolved hosts) and PATH entries under them (NixOS's
// /run/current-system/sw/bin, /run/wrappers/bin). A plain go build, git or
// npm needs nothing else there: name lookups fall back from nscd's and
// userdb's sockets (refused anyway) to /etc/passwd and /etc/hosts.
func keptPaths(hidden, environ []string) [][2]string {
	under := func(p string) bool {
		return slices.ContainsFunc(hidden, func(h string) bool { return within(h, p) })
	}
	// Resolving every PATH entry costs dozens of lstat calls a command:
	// only paths that name a hidden directory (or /var/run, an alias of
	// /run) are resolved.
	maybeUnder := func(p string) bool { return under(p) || within("/var/run", p) }
	var cands []string
	// The /etc files known to be links into /run on some systems (reading
	// all of /etc would cost more than the rest of the rule).
	for _, name := range etcLinks {
		link := filepath.Join("/etc", name)
		if target, err := os.Readlink(link); err == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join("/etc", target)
			}
			if maybeUnder(filepath.Clean(target)) {
				cands = append(cands, link)
			}
		}
	}
	for _, e := range environ {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			for _, d := range filepath.SplitList(v) {
				if filepath.IsAbs(d) && maybeUnder(filepath.Clean(d)) {
					cands = append(cands, d)
				}
			}
		}
	}
	var out [][2]string
	add := func(src, dst string) {
		if !slices.Contains(out, [2]string{src, dst}) {
			out = append(out, [2]string{src, dst})
		}
	}
	for _, c := range cands {
		c = filepath.Clean(c)
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		if under(real) {
			add(real, real)
		}
		if under(c) && c != real {
			add(real, c)
		}
	}
	return out
}

// socketArgs are bubblewrap's arguments for the socket rule's mount view:
// a tmpfs over each runtime directory, with what commands need and the
// allowed sockets bound back read-only (connect(2) needs no write access)
// and the Visible paths the tmpfs would hide. They go before the writable
// directories, which stay visible should one lie beneath.
func socketArgs(spec Spec, sockets, runDirs, environ []string) []string {
	hidden := runtimeDirs(runDirs, environ)
	var args []string
	for _, h := range hidden {
		args = append(args, "--tmpfs", h)
	}
	for _, k := range keptPaths(hidden, environ) {
		args = append(args, "--ro-bind", k[0], k[1])
	}
	bindBack := func(paths, hiddenToo []string) {
		for _, p := range paths {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue // not there (yet): nothing to bind
			}
			if slices.ContainsFunc(hiddenToo, func(h string) bool { return within(h, real) }) {
				args = append(args, "--ro-bind", real, real)
			}
		}
	}
	bindBack(spec.Visible, hidden) // bwrapCommand binds those under /tmp
	bindBack(sockets, append(hidden, "/tmp"))
	return args
}

// Sockets describes how unix sockets are confined, for `odin doctor`.
type Sockets struct {
	// Filtered is true when a seccomp filter refuses socket(AF_UNIX)
	// (and io_uring, which could bypass it) for commands without an
	// allowed socket.
	Filtered bool
	// Hidden are the runtime directories an empty tmpfs covers
	// (bubblewrap).
	Hidden []string
	// Scoped is true when Landlock keeps abstract unix sockets and
	// signals within the sandbox (the fallback, ABI 6 and later;
	// bubblewrap's network and PID namespaces do that by themselves).
	Scoped bool
	// Allowed are the sockets every agent's commands may reach;
	// AgentAllowed the per-agent additions.
	Allowed      []string
	AgentAllowed map[string][]string
	// Gaps say what is not confined here.
	Gaps []string
}

// describeSockets reports the socket rule in force under st.
func (l *Launcher) describeSockets(st Status) Sockets {
	s := Sockets{Filtered: st.Kind != KindNone && seccompSupported(), Allowed: l.unixSockets("")}
	for agent, list := range l.opts.AgentUnixSockets {
		if len(list) > 0 {
			if s.AgentAllowed == nil {
				s.AgentAllowed = map[string][]string{}
			}
			s.AgentAllowed[agent] = l.unixSockets(agent)
		}
	}
	anyAllowed := len(s.Allowed) > 0 || len(s.AgentAllowed) > 0
	switch st.Kind {
	case KindNone:
		s.Gaps = append(s.Gaps, "every unix socket is reachable: commands are not confined")
		return s
	case KindBubblewrap:
		s.Hidden = runtimeDirs(l.runDirs(), l.opts.Environ())
		if anyAllowed {
			s.Gaps = append(s.Gaps, "a command that may reach an allowed socket may open any unix socket: outside "+
				strings.Join(s.Hidden, ", ")+" and the private /tmp, the pathname sockets it can see stay reachable, "+
				"and so do the host's abstract sockets from processes that share its network (MCP servers)")
		}
	case KindLandlock:
		s.Scoped = l.abi >= landlockScopeABI
		if !s.Scoped {
			s.Gaps = append(s.Gaps, "Landlock ABI below 6: abstract unix sockets are refused by the seccomp filter only, and signals to processes outside the sandbox are not confined")
		}
		if anyAllowed {
			s.Gaps = append(s.Gaps, "Landlock cannot limit unix sockets by path: a command that may reach an allowed socket reaches every pathname socket of the host")
		}
	}
	if !seccompSupported() {
		s.Gaps = append(s.Gaps, "no seccomp socket filter for this architecture or kernel: socket(AF_UNIX) is not refused")
	}
	return s
}

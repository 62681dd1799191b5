// Package sandbox is the one launcher through which Odin starts every child
// process — ExecuteCommand, the QA checks, hooks and Odin's own git calls —
// so that what the command policy misses still cannot write outside the
// project, read Odin's secrets, reach the network or the user's terminal,
// or outlive Odin.
//
// Launching is two steps: Launcher.Plan turns a Spec into a Plan — the
// whole bwrap command line with its binds, the environment, who installs
// the socket filter, the Landlock rule set of the fallback, the proxy's
// domains — starting nothing (plan.go, pinned by testdata/plan-*.golden;
// go test -run TestPlanGolden -update rewrites them); Launcher.Launch
// executes a plan: it starts the proxy, opens the pipes bwrap reads and
// builds the exec.Cmd (launch.go). Command does both, and every caller
// (ExecuteCommand, the QA checks, hooks, git, MCP servers, odin-sitter,
// odin-fetch, the ACP terminal handoff) goes through it. Resource limits
// (limits.go) are set by the init helper where it runs, and under
// bubblewrap otherwise by Odin on bwrap's child held on --block-fd
// (Plan.LimitsByBlock), which spares a second exec per command.
//
// On Linux a Launcher prefers bubblewrap: new mount, PID, IPC, UTS, user
// and network namespaces, no capabilities, the whole file system bound
// read-only, the project root and added directories bound back writable in
// edit mode (read-only in ask and plan mode), with .git (and the gitdir a
// .git file names; an added directory's .git and the repositories nested
// beneath them too, see gitguard.go), .odin, odin.yaml and Odin's config and state
// directories bound read-only again on top; a private /tmp, a minimal /dev,
// a fresh /proc, --new-session (no controlling terminal, so no TIOCSTI and
// no /dev/tty) and --die-with-parent. Killing bwrap ends its PID namespace
// and everything in it, background and setsid'd children included. The
// read deny list (Options.DenyRead, package readdeny) is hidden last: an
// empty read-only tmpfs over each denied directory present, /dev/null over
// each denied file (deny.go). The Landlock fallback hides the denied paths
// by granting file reads beneath everything else, the project's .env files
// included; nothing new can then be made directly beside a denied file
// (landlockReadGrants).
//
// Unix sockets are refused: connect(2) needs no write access, so the
// read-only view would otherwise reach every server of the host listening
// on one (tmux, the session bus, docker). A seccomp filter (seccomp_linux.go)
// makes socket(AF_UNIX) fail with EPERM, and /run, /var/run and
// $XDG_RUNTIME_DIR are covered by an empty tmpfs (sockets.go); the sockets
// the user allows are bound back and let AF_UNIX through for the commands
// concerned. bwrap runs --as-pid-1, so that no unfiltered process (its
// reaper) sits above the command where ptrace could reach it; Odin's init,
// which relays the proxy unfiltered, makes itself undumpable.
//
// The network is off inside (only a private loopback). Where domains are
// allowed (permissions.network), Odin runs an HTTP proxy (CONNECT and plain
// HTTP) outside the sandbox on a unix socket that is bound into it; the
// odin binary itself, bound in and started as the sandbox's init (see
// Main), listens on 127.0.0.1 in the sandbox's network namespace and relays
// to that socket, and HTTP_PROXY/HTTPS_PROXY/ALL_PROXY point at it. The
// proxy admits only the allowed domains and answers others with a 403 whose
// body names the domain and the setting that would allow it. A process
// Odin itself configures for the network (Spec.Network = NetworkFull: the
// user's MCP servers, never a model's command) shares the host's network
// instead, with the file system confined as usual. Such a process may
// also be granted directories to write whatever its mode (Spec.Writable:
// an MCP server's data directory and the directories the user's config
// grants it), and Explain says why a path it failed on was hidden or
// read-only. The other way, a process launched with Spec.LoopbackRelay
// (ShellSession's shell) lets Odin reach the servers it starts on its
// private loopback: the init connects to them for Odin and hands back the
// connected socket (Process.DialLoopback, relay_linux.go).
//
// Where bubblewrap is missing or cannot create namespaces, the fallback is
// Landlock, applied by the same init helper (Go cannot run code between
// fork and exec, so the odin binary re-executes itself with a marker
// argument, confines its thread and starts the command from it): writes
// only beneath the root's entries other than the protected ones (so
// nothing can be created directly in the root), the added directories, the
// private cache, and /dev/null, /dev/zero, /dev/urandom; TCP connects only
// to the proxy (Landlock ABI 4 and later; the filter then allows no other
// inet socket than TCP: no UDP, ICMP or SCTP); reading /dev only for its
// harmless files (not the user's terminals) and /proc only for the
// machine's files, no process's /proc/PID (LandlockRules.PrivateProc:
// without a PID namespace those are every process's); the same
// socket filter, and abstract unix sockets and signals scoped to the
// sandbox (ABI 6 and later). The helper
// starts a new session, is a child subreaper and kills every descendant
// when the command ends, when it is signalled and — through a parent-death
// signal — when Odin dies; a process that escapes the subreaper's view in
// the instant before it is killed is the best-effort part.
//
// Children get an environment built from an allow list (PATH, HOME,
// locales, TERM, TZ, the toolchains' variables, plus permissions.env),
// from which anything that looks like a secret (*_KEY, *_TOKEN, *SECRET*,
// *PASSWORD*..., the providers' api_key_env) and any variable holding a
// secret's value are removed whatever the lists say. Spec.Env is added
// unfiltered; ScrubEnv applies the same secret rules to entries a caller
// takes from configuration.
//
// Build caches: each project gets a private cache under Odin's state
// directory (GOCACHE, npm, pip, XDG_CACHE_HOME), writable in every mode
// (go vet needs a build cache in ask mode too; it holds nothing of the
// user's and only feeds later sandboxed commands of the same project).
// The user's Go module cache is never writable; it is offered read-only as
// the first GOPROXY (file://…/cache/download), so modules the user already
// has are extracted into the project's private module cache without any
// network and a command cannot plant code that the user's own builds would
// later run.
package sandbox

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/readdeny"
	"github.com/odin-code/odin/internal/sandbox"
)

// doctorCheck is one thing `odin doctor` examines. A check prints what it
// found; when it fails it returns advice on how to fix it.
type doctorCheck struct {
	name string
	run  func(a *app, w io.Writer) (ok bool, advice string)
}

// doctorChecks are the checks in the order they run; add new ones here.
func doctorChecks() []doctorCheck {
	return []doctorCheck{
		{name: "config", run: checkConfigFiles},
		{name: "provider", run: checkProvider},
		{name: "mcp", run: checkMCP},
		{name: "odin-sitter", run: checkSitter},
		{name: "trust", run: checkTrust},
		{name: "sandbox", run: checkSandbox},
		{name: "store", run: checkStore},
		{name: "other-agents", run: checkForeign},
	}
}

func newDoctorCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor [CHECK...]",
		Short: "Check this machine and project: config files, the provider, key and model, MCP servers, odin-sitter, trust, the sandbox and the session store",
		Long: "Run every check, or only the named ones (config, provider, mcp, odin-sitter, trust, sandbox, store, other-agents); " +
			"the provider check sends one GET /models to the configured endpoint. Exits 1 when a check fails.",
		RunE: func(cmd *cobra.Command, args []string) error {
			checks := doctorChecks()
			for _, name := range args {
				if !slices.ContainsFunc(checks, func(c doctorCheck) bool { return c.name == name }) {
					var names []string
					for _, c := range checks {
						names = append(names, c.name)
					}
					return commandUsageError(cmd, false, "no check %q (checks: %s)", name, strings.Join(names, ", "))
				}
			}
			// A configuration that does not load fails the config check;
			// the others run with what does load.
			g.doctoring = true
			return withApp(g, func(a *app) error {
				var failed []string
				for _, c := range checks {
					if len(args) > 0 && !slices.Contains(args, c.name) {
						continue
					}
					ok, advice := c.run(a, stdout)
					if !ok {
						failed = append(failed, c.name)
						fmt.Fprintf(stdout, "  advice: %s\n", advice)
					}
				}
				if len(failed) > 0 {
					return &exitError{code: exitFailed, err: fmt.Errorf("doctor: failed: %s", strings.Join(failed, ", "))}
				}
				return nil
			})
		},
	}
}

// checkSandbox prints the sandbox in force and what it confines; it fails
// when commands would run unconfined or be refused.
func checkSandbox(a *app, w io.Writer) (bool, string) {
	a.probeLive = true
	l := a.sandbox()
	st := l.Status()
	d := l.Describe()
	fmt.Fprintf(w, "sandbox: %s (permissions.sandbox: %s)\n", st, st.Mode)
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, ", ")
	}
	if st.Kind != sandbox.KindNone {
		fmt.Fprintf(w, "  writable in edit mode: %s\n", list(d.Writable))
		fmt.Fprintf(w, "  read-only inside them: %s\n", list(d.Protected))
		fmt.Fprintln(w, "  ask and plan mode: nothing writable but the build cache")
		fmt.Fprintf(w, "  build cache (private to this project, writable): %s\n", d.Cache)
		if d.GoCacheLower != "" {
			fmt.Fprintf(w, "  beneath it, read-only: your Go build cache %s (GOCACHEPROG)\n", d.GoCacheLower)
		}
		if st.Kind == sandbox.KindBubblewrap {
			fmt.Fprintln(w, "  /tmp: private; /dev: minimal; /proc: fresh; new session, no terminal; dies with odin")
		} else {
			fmt.Fprintln(w, "  /tmp: not writable (TMPDIR is in the private cache); /dev: null, zero, urandom only; new session; dies with odin (best effort)")
		}
		fmt.Fprintf(w, "  limits per command: %s (%s; per process, not per tree: cgroups %s)\n", d.Limits, sandbox.LimitsKey, sandbox.CgroupStatus())
	}
	switch {
	case st.Kind == sandbox.KindNone:
		fmt.Fprintln(w, "  files and network: not confined")
	case len(d.Domains) == 0 && len(d.AgentDomains) == 0:
		fmt.Fprintf(w, "  network: off (allow hosts with %s)\n", sandbox.DomainsKey)
	default:
		fmt.Fprintf(w, "  network: through Odin's proxy to %s\n", list(d.Domains))
		var names []string
		for n := range d.AgentDomains {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			fmt.Fprintf(w, "    agent %s also: %s\n", n, list(d.AgentDomains[n]))
		}
	}
	printSockets(w, st, d.Sockets, list)
	fmt.Fprintf(w, "  environment passed: %s (secrets never; add names with permissions.env)\n", list(d.Env))
	printDenyRead(w, l.DescribeDenyRead(), st.Kind)
	switch {
	case st.Refuse:
		return false, "commands are refused: install bubblewrap (apt-get install bubblewrap) or let the kernel enable Landlock, or change permissions.sandbox"
	case st.Kind == sandbox.KindNone && st.Mode == sandbox.ModeOff:
		return false, "commands run unconfined because permissions.sandbox is off; set it to auto"
	case st.Kind == sandbox.KindNone:
		return false, "commands run unconfined: install bubblewrap (apt-get install bubblewrap), or boot a kernel with Landlock"
	}
	return true, ""
}

// printSockets says how unix sockets are confined: the seccomp rule, the
// hidden runtime directories, the allowed sockets and what this sandbox
// cannot confine.
func printSockets(w io.Writer, st sandbox.Status, s sandbox.Sockets, list func([]string) string) {
	if st.Kind != sandbox.KindNone {
		switch {
		case !s.Filtered:
			fmt.Fprintln(w, "  unix sockets: not refused")
		case len(s.Allowed) > 0 || len(s.AgentAllowed) > 0:
			fmt.Fprintln(w, "  unix sockets: refused to commands without an allowed socket (seccomp: socket(AF_UNIX), io_uring and pidfd_getfd fail with EPERM)")
		default:
			fmt.Fprintln(w, "  unix sockets: refused (seccomp: socket(AF_UNIX), io_uring and pidfd_getfd fail with EPERM)")
		}
		if len(s.Hidden) > 0 {
			fmt.Fprintf(w, "    hidden behind an empty tmpfs: %s\n", list(s.Hidden))
		}
		if s.Scoped {
			fmt.Fprintln(w, "    abstract sockets and signals: only within the sandbox (Landlock scopes)")
		}
		fmt.Fprintf(w, "    allowed: %s (%s)\n", list(s.Allowed), sandbox.SocketsKey)
		var names []string
		for n := range s.AgentAllowed {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			fmt.Fprintf(w, "    agent %s also: %s\n", n, list(s.AgentAllowed[n]))
		}
	}
	for _, g := range s.Gaps {
		fmt.Fprintf(w, "  not confined: %s\n", g)
	}
}

// printDenyRead lists the read deny list by source and says whether
// commands find its files hidden.
func printDenyRead(w io.Writer, h sandbox.Hidden, kind sandbox.Kind) {
	fmt.Fprintln(w, "  read deny list (permissions.deny_read; the file tools refuse these, a \"!pattern\" in your own config lifts one):")
	for _, src := range []readdeny.Source{readdeny.SourceDefault, readdeny.SourceUser, readdeny.SourceProject} {
		var pats []string
		for _, r := range h.Rules {
			if r.Source == src {
				pats = append(pats, r.Pattern)
			}
		}
		if len(pats) > 0 {
			fmt.Fprintf(w, "    %s: %s\n", src, strings.Join(pats, ", "))
		}
	}
	if len(h.Dropped) > 0 {
		fmt.Fprintf(w, "    dropped (a project may add patterns, not lift them): %s\n", strings.Join(h.Dropped, ", "))
	}
	switch {
	case !h.Enforced:
		fmt.Fprintln(w, "    NOT hidden from commands: they run unconfined")
		return
	case kind == sandbox.KindLandlock:
		fmt.Fprintln(w, "    under Landlock they are hidden too, but nothing new can be created directly in a directory that holds one (a .env at the project root: no new files at the root); install bubblewrap, or lift the rule with !PATTERN")
	}
	fmt.Fprintf(w, "    denied paths present now (%d): %s\n", len(h.Paths), strings.Join(h.Paths, ", "))
	if h.Incomplete {
		fmt.Fprintln(w, "    the project is too large to search whole for .env files: some may not be hidden from commands")
	}
}

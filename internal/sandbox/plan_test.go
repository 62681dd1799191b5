//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/readdeny"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// planHost is a made-up machine under one directory: a home with a key
// and a Go build cache, a project (a worktree, whose .git is a file), a
// further writable directory, a runtime directory with a socket, Odin's
// binary and an MCP server's program.
type planHost struct {
	base, home, root, add, cache, run, exe, server, mcpData, sock string
}

func newPlanHost(t *testing.T) planHost {
	t.Helper()
	// Under /tmp, whatever TMPDIR says: the plan treats paths under the
	// private /tmp differently, and the golden files pin that.
	base, err := os.MkdirTemp("/tmp", "odin-plan-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if base, err = filepath.EvalSymlinks(base); err != nil {
		t.Fatal(err)
	}
	h := planHost{base: base, home: filepath.Join(base, "home"), root: filepath.Join(base, "proj"),
		add: filepath.Join(base, "add"), cache: filepath.Join(base, "cache"), run: filepath.Join(base, "run"),
		exe: filepath.Join(base, "bin", "odin"), server: filepath.Join(base, "bin", "server"),
		mcpData: filepath.Join(base, "mcpdata"), sock: filepath.Join(base, "run", "user", "db.sock")}
	main := filepath.Join(base, "main")
	for _, d := range []string{h.home + "/.ssh", h.home + "/.cache/go-build", h.root + "/.odin", h.add,
		h.run + "/user", filepath.Dir(h.exe), h.mcpData, main + "/.git/worktrees/proj"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{
		h.home + "/.ssh/id_rsa": "KEY", h.root + "/odin.yaml": "{}", h.root + "/.env": "SECRET=1",
		h.root + "/.git": "gitdir: " + main + "/.git/worktrees/proj\n", h.exe: "", h.server: "", h.sock: "",
	} {
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// launcher is a Launcher that has "probed" kind without looking at the
// machine: the plan depends on the options and the files only.
func (h planHost) launcher(t *testing.T, opts Options, kind Kind, abi int, exe string) *Launcher {
	t.Helper()
	opts.Root, opts.AddDirs, opts.CacheDir = h.root, []string{h.add}, h.cache
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + h.home, "LANG=C.UTF-8", "OPENAI_API_KEY=sk-must-not-pass",
		"GOCACHE=off", "XDG_RUNTIME_DIR=" + h.run + "/user"}
	opts.Environ = func() []string { return env }
	l := New(opts)
	l.hostRun = []string{h.run}
	l.once.Do(func() {
		l.exe, l.bwrap, l.abi, l.bwrapSize = exe, "/usr/bin/bwrap", abi, true
		l.homeModCache = goModCache(l.opts.Environ())
		l.homeGoCache = userGoCache(l.opts.Environ())
		l.status = Status{Mode: l.opts.Mode, Kind: kind}
	})
	return l
}

// render writes a plan as launched with fixed launch values, with the
// host's directory as $T.
func (h planHost) render(t *testing.T, p Plan) string {
	t.Helper()
	path, argv, env, err := p.cmdline(launchValues{proxySocket: "/run/proxy.sock", proxyAddr: "127.0.0.1:3128", proxyPort: 3128, ppid: 4242})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "kind: %s\nseccomp: %s (allow unix: %v)\nproxy: %q\ngit guard: %q\ndir: %s\npath: %s\n", p.Kind, p.Seccomp, p.AllowUnix, p.Proxy, p.GitGuard, p.Dir, path)
	if p.LimitsByBlock() {
		// Set by Odin on bwrap's child, not on the command line.
		fmt.Fprintf(&b, "limits by block-fd: %+v\n", *p.Limits)
	}
	b.WriteString("argv:\n")
	for _, a := range argv {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	b.WriteString("env:\n")
	for _, e := range env {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	if p.Landlock != nil {
		js, _ := json.MarshalIndent(p.Landlock, "", "  ")
		fmt.Fprintf(&b, "landlock:\n%s\n", js)
	}
	return strings.ReplaceAll(b.String(), h.base, "$T")
}

// TestPlanGolden pins the whole command line of each kind of launch:
// edit and ask mode, network through the proxy, off and full, an MCP
// server's granted and visible paths, an allowed unix socket, the read
// deny list, the Go build cache offered through GOCACHEPROG, the loopback
// relay (an init without a proxy under bubblewrap, nothing under Landlock), and the
// Landlock rule sets by ABI (not with a deny list: its read grants list
// the real machine's root). Run with -update after an intended change
// and read the diff.
func TestPlanGolden(t *testing.T) {
	if !seccompSupported() {
		t.Skip("no socket filter on this machine: the golden files assume one")
	}
	h := newPlanHost(t)
	bash := []string{"bash", "-c", "go test ./..."}
	deny := func() *readdeny.Rules {
		r, err := readdeny.New(readdeny.Options{Home: h.home, Root: h.root})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	limits := Limits{Processes: 4096, Memory: 8 << 30, FileSize: 16 << 30, CPUTime: 90 * time.Minute, TmpSize: 2 << 30}
	cases := []struct {
		name string
		opts Options
		kind Kind
		abi  int
		exe  string
		spec Spec
	}{
		{name: "bwrap-ask", kind: KindBubblewrap, exe: h.exe, spec: Spec{Args: bash}},
		{name: "bwrap-edit", kind: KindBubblewrap, exe: h.exe, spec: Spec{Args: bash, Write: true, Env: []string{"ODIN=1"}}},
		{name: "bwrap-proxy", kind: KindBubblewrap, exe: h.exe, opts: Options{Domains: []string{"proxy.golang.org"},
			AgentDomains: map[string][]string{"code": {"*.example.com"}}}, spec: Spec{Args: bash, Write: true, Agent: "code"}},
		{name: "bwrap-agent-offline", kind: KindBubblewrap, exe: h.exe, opts: Options{Domains: []string{"proxy.golang.org"},
			NoNetwork: map[string]bool{"review": true}}, spec: Spec{Args: bash, Agent: "review"}},
		{name: "bwrap-mcp-server", kind: KindBubblewrap, exe: h.exe, opts: Options{Protected: []string{h.base}},
			spec: Spec{Args: []string{h.server, "--stdio"}, Network: NetworkFull, Writable: []string{h.mcpData}, Visible: []string{h.server}}},
		{name: "bwrap-unix-socket", kind: KindBubblewrap, exe: h.exe, opts: Options{AllowUnixSockets: []string{h.sock}}, spec: Spec{Args: bash}},
		{name: "bwrap-deny-read", kind: KindBubblewrap, exe: h.exe, opts: Options{DenyRead: deny()}, spec: Spec{Args: bash, Write: true}},
		{name: "bwrap-gocache", kind: KindBubblewrap, exe: h.exe, spec: Spec{Args: bash}},
		{name: "bwrap-relay", kind: KindBubblewrap, exe: h.exe, spec: Spec{Args: bash, Write: true, LoopbackRelay: true}},
		{name: "landlock-relay-abi6", kind: KindLandlock, abi: 6, exe: h.exe, spec: Spec{Args: bash, LoopbackRelay: true}},
		{name: "landlock-edit-abi6", kind: KindLandlock, abi: 6, exe: h.exe, opts: Options{AllowUnixSockets: []string{h.sock}}, spec: Spec{Args: bash, Write: true}},
		{name: "landlock-proxy-abi4", kind: KindLandlock, abi: 4, exe: h.exe, opts: Options{Domains: []string{"proxy.golang.org"}}, spec: Spec{Args: bash}},
		{name: "landlock-ask-abi3", kind: KindLandlock, abi: 3, exe: h.exe, spec: Spec{Args: bash}},
		{name: "bwrap-limits", kind: KindBubblewrap, exe: h.exe, opts: Options{Limits: limits}, spec: Spec{Args: bash, Write: true}},
		// The defaults have no CPU limit: Odin sets them on bwrap's
		// child (--block-fd), without the init.
		{name: "bwrap-limits-block", kind: KindBubblewrap, exe: h.exe, opts: Options{Limits: Limits{Processes: 4096, Memory: 8 << 30, FileSize: 16 << 30, TmpSize: 2 << 30}},
			spec: Spec{Args: bash, Write: true}},
		{name: "bwrap-limits-block-proxy", kind: KindBubblewrap, exe: h.exe, opts: Options{Limits: Limits{Processes: 4096}, Domains: []string{"proxy.golang.org"}},
			spec: Spec{Args: bash}},
		{name: "landlock-limits-abi6", kind: KindLandlock, abi: 6, exe: h.exe, opts: Options{Limits: limits}, spec: Spec{Args: bash, Write: true}},
		{name: "none-init", kind: KindNone, exe: h.exe, opts: Options{Mode: ModeOff}, spec: Spec{Args: bash, Write: true}},
		{name: "none-plain-proxy", kind: KindNone, opts: Options{Mode: ModeOff, Domains: []string{"proxy.golang.org"}}, spec: Spec{Args: bash}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := h.launcher(t, c.opts, c.kind, c.abi, c.exe)
			if c.name == "bwrap-gocache" {
				// The only case with a user build cache to offer.
				l.homeGoCache = filepath.Join(h.home, ".cache", "go-build")
			}
			p, err := l.Plan(c.spec)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			got := h.render(t, p)
			if strings.Contains(got, "sk-must-not-pass") {
				t.Errorf("the provider key reaches the child:\n%s", got)
			}
			golden := filepath.Join("testdata", "plan-"+c.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/sandbox -run TestPlanGolden -update)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("plan differs from %s (-want +got):\n%s", golden, d)
			}
		})
	}
}

// TestPlanRefuses: a mode that demands a missing sandbox plans nothing,
// and an empty command is an error, not a launch of nothing.
func TestPlanRefuses(t *testing.T) {
	h := newPlanHost(t)
	l := h.launcher(t, Options{Mode: ModeBubblewrap}, KindNone, 0, h.exe)
	l.status.Refuse = true
	if _, err := l.Plan(Spec{Args: []string{"true"}}); !errors.Is(err, ErrNoSandbox) {
		t.Errorf("Plan under a refusing mode: %v, want ErrNoSandbox", err)
	}
	l = h.launcher(t, Options{}, KindBubblewrap, 0, h.exe)
	if _, err := l.Plan(Spec{}); err == nil {
		t.Error("Plan of an empty command succeeded")
	}
	// The proxy is relayed by Odin's binary: without it there is no plan
	// rather than a command that cannot reach its allowed hosts.
	l = h.launcher(t, Options{Domains: []string{"example.com"}}, KindBubblewrap, 0, "")
	if _, err := l.Plan(Spec{Args: []string{"true"}}); err == nil {
		t.Error("a proxied bubblewrap plan without Odin's binary succeeded")
	}
}

// TestConfinedNeverPlansUnconfined: a Confined process (a helper, an MCP
// server) is refused where auto mode would run it unconfined, with the fix
// named; an unconfined command is still planned there (auto's warning
// covers it), Landlock confines a Confined one, and sandbox off, the
// user's own choice, runs it.
func TestConfinedNeverPlansUnconfined(t *testing.T) {
	noLandlock := func() LandlockStatus { return LandlockStatus{Reason: "simulated: no Landlock"} }
	withLandlock := func() LandlockStatus { return LandlockStatus{Available: true, ABI: 4} }
	tests := []struct {
		name     string
		opts     Options
		confined bool
		want     Kind // "" for a refusal
	}{
		{"auto without any sandbox refuses a confined process", Options{ProbeLandlock: noLandlock}, true, ""},
		{"auto without any sandbox runs a command", Options{ProbeLandlock: noLandlock}, false, KindNone},
		{"auto falls back to Landlock", Options{ProbeLandlock: withLandlock}, true, KindLandlock},
		{"sandbox off runs it", Options{Mode: ModeOff, ProbeLandlock: noLandlock}, true, KindNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Root, tt.opts.Bwrap, tt.opts.Executable = t.TempDir(), "/nonexistent/bwrap", "/usr/bin/odin"
			l := New(tt.opts)
			p, err := l.Plan(Spec{Args: []string{"/usr/bin/odin-fetch"}, Confined: tt.confined})
			if tt.want == "" {
				if !errors.Is(err, ErrNoSandbox) || !strings.Contains(err.Error(), "odin-fetch") || !strings.Contains(err.Error(), "install bubblewrap") {
					t.Errorf("not refused, or without the program and the fix: %v", err)
				}
				return
			}
			if err != nil || p.Kind != tt.want {
				t.Errorf("plan %v, %v; want %s", p.Kind, err, tt.want)
			}
		})
	}
}

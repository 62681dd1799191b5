package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the sandbox's init helper, as
// odin's main does.
func TestMain(m *testing.M) {
	Main()
	if mode := os.Getenv("ODIN_SANDBOX_TEST_PARENT"); mode != "" {
		os.Exit(actAsOdin(Mode(mode), os.Getenv("ODIN_SANDBOX_TEST_MARKER")))
	}
	if mode := os.Getenv("ODIN_SANDBOX_TEST_ATTACK"); mode != "" {
		os.Exit(actAsAttackedOdin(Mode(mode)))
	}
	if mode := os.Getenv("ODIN_SANDBOX_TEST_NPROC"); mode != "" {
		limit, _ := strconv.Atoi(os.Getenv("ODIN_SANDBOX_TEST_LIMIT"))
		os.Exit(actAsForkBombedOdin(Mode(mode), os.Getenv("ODIN_SANDBOX_TEST_ROOT"), limit))
	}
	if mode := os.Getenv("ODIN_SANDBOX_TEST_TTY"); mode != "" {
		os.Exit(actAsOdinInTerminal(Mode(mode)))
	}
	os.Exit(m.Run())
}

// actAsOdin plays Odin for TestChildrenDieWithOdin: it starts a sandboxed
// command that would run for a long time and waits for it, until killed.
func actAsOdin(mode Mode, marker string) int {
	l := New(Options{Mode: mode, Root: os.TempDir()})
	p, err := l.Command(context.Background(), Spec{Args: []string{"bash", "-c", "sleep " + marker + " & setsid sleep " + marker + " & wait"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := p.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return 0
}

// TestChildrenDieWithOdin: after kill -9 of the process that launched a
// command, nothing the command started keeps running.
func TestChildrenDieWithOdin(t *testing.T) {
	for _, mode := range append(kinds(t), ModeOff) {
		t.Run(string(mode), func(t *testing.T) {
			marker := fmt.Sprintf("%d.%d", 2000+os.Getpid()%1000, time.Now().UnixNano()%1000)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "ODIN_SANDBOX_TEST_PARENT="+string(mode), "ODIN_SANDBOX_TEST_MARKER="+marker)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for i := 0; len(sleepers(marker)) < 2; i++ {
				if i > 500 {
					t.Fatal("the command never started")
				}
				time.Sleep(10 * time.Millisecond)
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			// The kernel delivers the parent-death signals and tears the
			// namespace down asynchronously: poll, with a generous bound.
			for i := 0; len(sleepers(marker)) > 0; i++ {
				if i > 500 {
					t.Fatalf("sleep %s outlived its killed parent: %v", marker, sleepers(marker))
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// project is a scratch project with a git config, an odin.yaml, a state
// directory inside it, and a canary directory outside it.
type project struct {
	root, outside, state string
}

func newProject(t *testing.T) project {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The canary directory is outside /tmp, which bubblewrap replaces
	// with a private one: a write there would vanish, not fail.
	outside, err := os.MkdirTemp("/var/tmp", "odin-sandbox-canary-")
	if err != nil {
		outside = filepath.Join(base, "outside")
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	p := project{root: filepath.Join(base, "proj"), outside: outside}
	p.state = filepath.Join(p.root, ".state")
	for _, d := range []string{filepath.Join(p.root, ".git"), filepath.Join(p.root, "src"), p.outside, p.state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(p.root, ".git", "config"), "[core]\n")
	write(t, filepath.Join(p.root, "odin.yaml"), "mode: edit\n")
	write(t, filepath.Join(p.outside, "keep.txt"), "original\n")
	return p
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (p project) launcher(mode Mode, env []string) *Launcher {
	return New(Options{Mode: mode, Root: p.root, Protected: []string{p.state},
		CacheDir: CacheDirFor(p.state, p.root), SecretEnv: []string{"MY_PROVIDER"},
		Environ: func() []string { return env }})
}

func run(t *testing.T, l *Launcher, write bool, script string) (string, error) {
	t.Helper()
	p, err := l.Command(t.Context(), Spec{Args: []string{"bash", "-c", script}, Write: write})
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	defer p.Release()
	var out bytes.Buffer
	p.Stdout, p.Stderr = &out, &out
	err = p.Run()
	return out.String(), err
}

// kinds are the sandboxes testable here.
func kinds(t *testing.T) []Mode {
	var modes []Mode
	if _, why := probeBwrap("bwrap"); why == "" {
		modes = append(modes, ModeBubblewrap)
	} else {
		t.Logf("bubblewrap not tested: %s", why)
	}
	if Probe().Available {
		modes = append(modes, ModeLandlock)
	} else {
		t.Logf("Landlock not tested: %s", Probe().Reason)
	}
	if len(modes) == 0 {
		t.Skip("no sandbox available here")
	}
	return modes
}

func baseEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8",
		"OPENAI_API_KEY=sk-canary-0123456789", "GITHUB_TOKEN=ghp_canary_abcdefgh", "MY_PROVIDER=prov-canary-9876",
		"INNOCENT=sk-canary-0123456789", "SOMETHING_ELSE=dropped"}
}

func TestConfinement(t *testing.T) {
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			l := p.launcher(mode, baseEnv())
			if st := l.Status(); string(st.Kind) != string(mode) {
				t.Fatalf("status %v, want %s", st, mode)
			}
			cases := []struct {
				name, script string
				write, ok    bool
			}{
				{"write in a subdirectory", "echo hi > src/new.txt && rm src/new.txt", true, true},
				{"read outside", "cat " + p.outside + "/keep.txt", true, true},
				{"dev null", "echo hi > /dev/null", true, true},
				{"write outside", "echo x > " + p.outside + "/canary", true, false},
				{"append outside", "echo x >> " + p.outside + "/keep.txt", true, false},
				{"git config", "echo '[core] fsmonitor = evil' >> .git/config", true, false},
				{"git config via /proc/self/cwd", "cd .git && echo '[core] fsmonitor = evil' >> /proc/self/cwd/config", true, false},
				{"new git hook", "echo evil > .git/hooks-post", true, false},
				{"odin.yaml", "echo 'permissions: {sandbox: off}' >> odin.yaml", true, false},
				{"state dir", "echo x > .state/planted", true, false},
				{"home outside", "echo x > " + p.outside + "/../canary-home", true, false},
				{"ask mode write in root", "echo x > src/ask.txt", false, false},
				{"ask mode write outside", "echo x > " + p.outside + "/canary", false, false},
				{"terminal", "echo owned > /dev/tty", true, false},
			}
			for _, c := range cases {
				out, err := run(t, l, c.write, c.script)
				if (err == nil) != c.ok {
					t.Errorf("%s: %q: err %v, want ok=%v\n%s", c.name, c.script, err, c.ok, out)
				}
			}
			if data, _ := os.ReadFile(filepath.Join(p.root, ".git", "config")); string(data) != "[core]\n" {
				t.Errorf(".git/config changed: %q", data)
			}
			if data, _ := os.ReadFile(filepath.Join(p.outside, "keep.txt")); string(data) != "original\n" {
				t.Errorf("outside file changed: %q", data)
			}
			for _, f := range []string{filepath.Join(p.outside, "canary"), filepath.Join(p.root, "src", "ask.txt"),
				filepath.Join(p.root, ".git", "hooks-post"), filepath.Join(p.state, "planted")} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%s was created", f)
				}
			}
		})
	}
}

func TestEnvironmentHoldsNoSecret(t *testing.T) {
	for _, mode := range append(kinds(t), ModeOff) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			out, err := run(t, p.launcher(mode, baseEnv()), true, "env; cat /proc/self/environ | tr '\\0' '\\n'; ps e 2>/dev/null || true")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, secret := range []string{"sk-canary", "ghp_canary", "prov-canary", "SOMETHING_ELSE"} {
				if strings.Contains(out, secret) {
					t.Errorf("%s reached the child:\n%s", secret, out)
				}
			}
			if !strings.Contains(out, "LANG=C.UTF-8") {
				t.Errorf("LANG was not passed:\n%s", out)
			}
		})
	}
}

func TestFilterEnv(t *testing.T) {
	env := []string{"PATH=/bin", "LC_ALL=C", "AWS_SECRET_ACCESS_KEY=abcdefghij", "MY_VAR=1", "MY_API_KEY=zzzzzzzzzz",
		"DB_PASSWORD=hunter22", "OTHER=x", "COPY=abcdefghij", "NPM_TOKEN=n"}
	got := FilterEnv(env, []string{"MY_*", "COPY", "NPM_TOKEN"}, nil)
	want := []string{"PATH=/bin", "LC_ALL=C", "MY_VAR=1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("FilterEnv = %v, want %v", got, want)
	}
}

// TestTreeDiesWithCommand: a setsid'd background job is gone when the
// command returns, and so is everything when the launcher's context ends.
func TestTreeDiesWithCommand(t *testing.T) {
	for _, mode := range append(kinds(t), ModeOff) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			l := p.launcher(mode, baseEnv())
			marker := fmt.Sprintf("%d.%d", 1000+os.Getpid()%1000, time.Now().UnixNano()%1000)
			if out, err := run(t, l, true, "setsid sleep "+marker+" & (sleep "+marker+" &) ; echo started"); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if pids := sleepers(marker); len(pids) > 0 {
				t.Errorf("sleep %s still running as %v after the command ended", marker, pids)
			}
		})
	}
}

// sleepers lists the processes running `sleep marker`.
func sleepers(marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		data, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if strings.Contains(string(data), "sleep\x00"+marker) {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

func TestTIOCSTIFails(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	script := `python3 -c '
import fcntl, termios, os, sys
try:
    fd = os.open("/dev/tty", os.O_RDWR)
except OSError as e:
    print("no tty:", e); sys.exit(3)
fcntl.ioctl(fd, termios.TIOCSTI, b"x")
print("INJECTED")'`
	for _, mode := range kinds(t) {
		p := newProject(t)
		out, err := run(t, p.launcher(mode, baseEnv()), true, script)
		if err == nil || strings.Contains(out, "INJECTED") {
			t.Errorf("%s: TIOCSTI succeeded: %v\n%s", mode, err, out)
		}
	}
}

func TestRequiredRefuses(t *testing.T) {
	l := New(Options{Mode: ModeBubblewrap, Root: t.TempDir(), Bwrap: "/nonexistent/bwrap"})
	if _, err := l.Command(t.Context(), Spec{Args: []string{"true"}}); err == nil {
		t.Fatal("bubblewrap mode ran a command without bubblewrap")
	}
	if st := l.Status(); !st.Refuse || !strings.Contains(st.String(), "not installed") {
		t.Errorf("status %v", st)
	}
}

func TestAutoFallsBackToLandlock(t *testing.T) {
	if !Probe().Available {
		t.Skip("no Landlock")
	}
	l := New(Options{Root: t.TempDir(), Bwrap: "/nonexistent/bwrap"})
	st := l.Status()
	if st.Kind != KindLandlock || !st.Degraded() || !strings.Contains(st.String(), "fallback because") {
		t.Errorf("status %v", st)
	}
}

func TestNetworkProxy(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from outside")
	}))
	defer srv.Close()
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			l := New(Options{Mode: mode, Root: p.root, Environ: baseEnv, Domains: []string{"localhost"},
				AgentDomains: map[string][]string{"test": {"*.example.test"}}})
			// Direct connections fail: no network in the sandbox.
			out, err := runAgent(t, l, "", "curl -sS --max-time 5 --noproxy '*' "+srv.URL)
			if err == nil || strings.Contains(out, "hello from outside") {
				t.Errorf("direct connection worked:\n%s", out)
			}
			// Through the proxy, an allowed domain works.
			out, err = runAgent(t, l, "", "curl -sS --max-time 5 --noproxy '' -x \"$HTTP_PROXY\" http://localhost:"+port+"/")
			if err != nil || !strings.Contains(out, "hello from outside") {
				t.Errorf("allowed domain failed: %v\n%s", err, out)
			}
			// Another host is refused with a message naming it and the key.
			pr, err := l.Command(t.Context(), Spec{Agent: "", Args: []string{"bash", "-c",
				"curl -sS --max-time 5 --noproxy '' -x \"$HTTP_PROXY\" http://blocked.invalid/"}})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := pr.CombinedOutput()
			pr.Release()
			if !strings.Contains(string(b), "blocked.invalid") || !strings.Contains(string(b), DomainsKey) {
				t.Errorf("denial does not name the domain and the key:\n%s", b)
			}
			if got := pr.Blocked(); len(got) != 1 || got[0] != "blocked.invalid" {
				t.Errorf("Blocked = %v", got)
			}
			// The agent's own list widens only that agent.
			if !DomainAllowed("pkg.example.test", l.domains("test")) || DomainAllowed("pkg.example.test", l.domains("code")) {
				t.Error("per-agent domains are not per agent")
			}
		})
	}
}

func runAgent(t *testing.T, l *Launcher, agent, script string) (string, error) {
	t.Helper()
	p, err := l.Command(t.Context(), Spec{Agent: agent, Args: []string{"bash", "-c", script}, Write: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	b, err := p.CombinedOutput()
	return string(b), err
}

func TestDomainAllowed(t *testing.T) {
	allowed := []string{"proxy.golang.org", "*.npmjs.org"}
	for host, want := range map[string]bool{
		"proxy.golang.org": true, "PROXY.golang.org.": true, "evil.proxy.golang.org": false,
		"registry.npmjs.org": true, "npmjs.org": false, "example.com": false, "golang.org": false,
	} {
		if got := DomainAllowed(host, allowed); got != want {
			t.Errorf("DomainAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestGrantBeneath(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git", "a/b", "a/c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(root, "f.txt"), "")
	got := grantBeneath(root, []string{filepath.Join(root, ".git"), filepath.Join(root, "a", "b")})
	want := []string{filepath.Join(root, "a", "c"), filepath.Join(root, "f.txt")}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("grantBeneath = %v, want %v", got, want)
	}
}

// BenchmarkLaunch compares a sandboxed `bash -c true` with a plain one;
// it reports the sandbox's cost per command in ms and as a ratio.
func BenchmarkLaunch(b *testing.B) {
	root := b.TempDir()
	plain := func() {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	measure := func(f func()) time.Duration {
		start := time.Now()
		for range 20 {
			f()
		}
		return time.Since(start) / 20
	}
	base := measure(plain)
	// With the default limits (permissions.sandbox_limits) bubblewrap
	// starts the command through Odin's init, which sets them.
	limits := Limits{Processes: 4096, Memory: 8 << 30, FileSize: 16 << 30, TmpSize: 4 << 30}
	for _, c := range []struct {
		name string
		mode Mode
		lim  Limits
	}{{"bubblewrap", ModeBubblewrap, Limits{}}, {"bubblewrap-limits", ModeBubblewrap, limits},
		{"landlock", ModeLandlock, Limits{}}, {"landlock-limits", ModeLandlock, limits}, {"off", ModeOff, Limits{}}} {
		l := New(Options{Mode: c.mode, Root: root, CacheDir: filepath.Join(root, ".cache"), Limits: c.lim})
		if l.Status().Refuse {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			launch := func() {
				p, err := l.Command(b.Context(), Spec{Args: []string{"bash", "-c", "true"}, Write: true})
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Run(); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			for b.Loop() {
				launch()
			}
			per := time.Since(start) / time.Duration(max(b.N, 1))
			b.ReportMetric(float64(per)/float64(base), "x-plain")
			b.ReportMetric(float64(per-base)/float64(time.Millisecond), "ms-added")
		})
	}
}

package sandbox

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNetworkFull: a process Odin launches with NetworkFull (an MCP
// server) reaches a host port directly, with no proxy in its environment,
// while the file system stays confined: the root and a directory outside
// it are read-only, secrets are absent. The same command without
// NetworkFull cannot connect.
func TestNetworkFull(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from outside")
	}))
	defer srv.Close()
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			l := New(Options{Mode: mode, Root: p.root, Environ: baseEnv, Domains: []string{"example.test"},
				SecretEnv: []string{"MY_PROVIDER"}})
			script := "curl -sS --max-time 5 --noproxy '*' " + srv.URL + "; echo proxy=${HTTP_PROXY:-none}" +
				"; echo pwned > " + filepath.Join(p.root, "canary") + "; echo pwned > " + filepath.Join(p.outside, "canary") +
				"; env"
			for _, net := range []Network{NetworkProxy, NetworkFull} {
				pr, err := l.Command(t.Context(), Spec{Args: []string{"bash", "-c", script}, Network: net})
				if err != nil {
					t.Fatal(err)
				}
				b, _ := pr.CombinedOutput()
				pr.Release()
				out := string(b)
				if got := strings.Contains(out, "hello from outside"); got != (net == NetworkFull) {
					t.Errorf("network %d: connected = %v:\n%s", net, got, out)
				}
				if net == NetworkFull && !strings.Contains(out, "proxy=none") {
					t.Errorf("NetworkFull still sets a proxy:\n%s", out)
				}
				for _, secret := range []string{"sk-canary-0123456789", "ghp_canary_abcdefgh", "prov-canary-9876"} {
					if strings.Contains(out, secret) {
						t.Errorf("network %d: secret %s reached the process", net, secret)
					}
				}
				for _, c := range []string{filepath.Join(p.root, "canary"), filepath.Join(p.outside, "canary")} {
					if _, err := os.Stat(c); err == nil {
						t.Errorf("network %d: read-only process wrote %s", net, c)
					}
				}
			}
		})
	}
}

// TestScrubEnv: declared entries lose secret names and secret values,
// except the names the user kept on purpose.
func TestScrubEnv(t *testing.T) {
	l := New(Options{Environ: baseEnv, SecretEnv: []string{"MY_PROVIDER"}})
	got := l.ScrubEnv([]string{"GITHUB_TOKEN=ghp_user", "API_TOKEN=x", "MY_PROVIDER=p", "COPY=sk-canary-0123456789",
		"DEBUG=1", "KEPT_KEY=kk", "bad"}, []string{"GITHUB_TOKEN", "KEPT_KEY"})
	want := []string{"GITHUB_TOKEN=ghp_user", "DEBUG=1", "KEPT_KEY=kk"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ScrubEnv (-want +got):\n%s", diff)
	}
	if slices.Contains(got, "COPY=sk-canary-0123456789") {
		t.Error("a provider key copied into an innocent name passed")
	}
}

// TestVisible: a program under /tmp (hidden by bubblewrap's private /tmp)
// runs when listed in Visible; a listed symlink outside /tmp is left
// alone (binding onto it would make bwrap fail).
func TestVisible(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip(why)
	}
	p := newProject(t)
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program")
	}
	data, err := os.ReadFile(truePath)
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(prog, data, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(p.outside, "link")
	if err := os.Symlink(prog, link); err != nil {
		t.Fatal(err)
	}
	l := New(Options{Mode: ModeBubblewrap, Root: p.root, Environ: baseEnv})
	for _, visible := range [][]string{{prog}, {link, prog}} {
		pr, err := l.Command(t.Context(), Spec{Args: []string{prog}, Visible: visible, Network: NetworkFull})
		if err != nil {
			t.Fatal(err)
		}
		out, err := pr.CombinedOutput()
		pr.Release()
		if err != nil {
			t.Errorf("Visible %v: %v\n%s", visible, err, out)
		}
	}
}

// TestURLCredentialsNeverPass: a token inside a URL (a private GOPROXY,
// pip's index, a database URL passed on purpose) never reaches a command,
// whatever the variable's name; the GOPROXY the sandbox composes names
// the user's proxy without its token. Nor do the addresses of the user's
// servers (SSH_AUTH_SOCK, the session bus, DOCKER_HOST, X11, tmux).
func TestURLCredentialsNeverPass(t *testing.T) {
	const token = "tok-canary-url-4242"
	env := []string{"PATH=/usr/bin", "HOME=/home/u",
		"GOPROXY=https://alice:" + token + "@goproxy.corp.example/mod,direct",
		"PIP_INDEX_URL=https://__token__:" + token + "@pypi.corp.example/simple",
		"DATABASE_URL=postgres://app:" + token + "@db:5432/app",
		"GONOSUMDB=corp.example/*", "CC=gcc"}
	got := FilterEnv(env, []string{"PIP_INDEX_URL", "DATABASE_URL"}, nil)
	for _, kv := range got {
		if strings.Contains(kv, token) {
			t.Errorf("%s reaches the command", kv)
		}
	}
	if !slices.Contains(got, "GONOSUMDB=corp.example/*") || !slices.Contains(got, "CC=gcc") {
		t.Errorf("innocent variables were dropped: %q", got)
	}
	// The addresses of servers outside the sandbox are not passed either:
	// a command would find their sockets by them.
	sockets := []string{"SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
		"DOCKER_HOST=unix:///var/run/docker.sock", "DISPLAY=:0", "XAUTHORITY=/home/u/.Xauthority", "WAYLAND_DISPLAY=wayland-0",
		"GPG_AGENT_INFO=/run/user/1000/gnupg/S.gpg-agent", "TMUX=/tmp/tmux-1000/default,1,0", "KUBECONFIG=/home/u/.kube/config"}
	if got := FilterEnv(append(slices.Clone(env), sockets...), nil, nil); slices.ContainsFunc(got, func(kv string) bool { return slices.Contains(sockets, kv) }) {
		t.Errorf("a server's address reaches the command: %q", got)
	}
	if got := stripURLCredentials("https://alice:" + token + "@goproxy.corp.example/mod,direct"); got != "https://goproxy.corp.example/mod,direct" {
		t.Errorf("stripURLCredentials = %q", got)
	}
	if hasURLCredentials("https://goproxy.io,direct") || hasURLCredentials("git@github.com:x/y") {
		t.Error("a URL without a password counts as one")
	}
	// The GOPROXY the launcher composes over the user's module cache.
	mod := filepath.Join(t.TempDir(), "mod")
	if err := os.MkdirAll(filepath.Join(mod, "cache", "download"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	l := New(Options{Mode: ModeOff, Root: root, CacheDir: filepath.Join(root, ".cache"),
		Environ: func() []string { return append(slices.Clone(env), "GOMODCACHE="+mod) }})
	var goproxy string
	for _, kv := range l.childEnv(Spec{Args: []string{"true"}}) {
		if strings.Contains(kv, token) {
			t.Errorf("%s reaches the command", kv)
		}
		if v, ok := strings.CutPrefix(kv, "GOPROXY="); ok {
			goproxy = v
		}
	}
	if !strings.Contains(goproxy, "https://goproxy.corp.example/mod") {
		t.Errorf("GOPROXY = %q: the user's proxy is gone", goproxy)
	}
}

package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// passedEnv are the variables children get: what shells, locales and the
// common toolchains need to find themselves. Anything else (credentials
// above all) stays with Odin unless permissions.env names it.
var passedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ",
	"GOPATH", "GOROOT", "GOFLAGS", "GOPROXY", "GONOPROXY", "GOPRIVATE", "GONOSUMDB", "GOSUMDB",
	"GOTOOLCHAIN", "GOOS", "GOARCH", "GOAMD64", "GOARM", "CGO_ENABLED", "CGO_*", "GOEXPERIMENT", "GODEBUG",
	"CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "PKG_CONFIG_PATH",
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS",
	"NVM_DIR", "NODE_PATH", "VOLTA_HOME", "PNPM_HOME",
	"VIRTUAL_ENV", "PYTHONPATH", "CONDA_PREFIX", "PYENV_ROOT",
	"JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_HOME",
}

// secretPatterns are names (upper-cased) that look like credentials; they
// never reach a child, whatever the allow list says.
var secretPatterns = []string{"*_KEY", "*_KEY_*", "*_TOKEN", "*_TOKEN_*", "*SECRET*", "*PASSWORD*", "*PASSWD*",
	"*CREDENTIAL*", "*_PAT", "*APIKEY*", "*_AUTH"}

// IsSecret reports whether the variable name looks like a credential or
// is one of extra.
func IsSecret(name string, extra []string) bool {
	if slices.Contains(extra, name) {
		return true
	}
	up := strings.ToUpper(name)
	for _, p := range secretPatterns {
		if ok, _ := filepath.Match(p, up); ok {
			return true
		}
	}
	return false
}

func matchName(patterns []string, name string) bool {
	for _, p := range patterns {
		if p == name {
			return true
		}
		if pre, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

// FilterEnv returns the entries of environ whose names are allowed (the
// built-in list or pass) and not secret. A variable whose value equals a
// secret's value is dropped too, so that copying a key into an innocent
// name does not carry it through.
func FilterEnv(environ, pass, secrets []string) []string {
	secretValues := map[string]bool{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) >= 8 && IsSecret(k, secrets) {
			secretValues[v] = true
		}
	}
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if !matchName(passedEnv, k) && !matchName(pass, k) {
			continue
		}
		if IsSecret(k, secrets) || secretValues[v] || hasURLCredentials(v) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// hasURLCredentials reports whether v holds a URL with a password
// ("https://user:token@proxy.corp/"): GOPROXY, pip's and npm's index URLs
// carry private registries' tokens that way, under names no pattern
// catches. Such a variable is a secret, whatever its name.
func hasURLCredentials(v string) bool {
	for rest := v; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return false
		}
		rest = rest[i+3:]
		auth := rest
		if j := strings.IndexAny(auth, "/?#, |"); j >= 0 {
			auth = auth[:j]
		}
		if at := strings.LastIndexByte(auth, '@'); at >= 0 && strings.Contains(auth[:at], ":") {
			return true
		}
	}
}

// stripURLCredentials removes the user information of every URL in v
// ("https://user:token@host/" becomes "https://host/").
func stripURLCredentials(v string) string {
	var b strings.Builder
	for {
		i := strings.Index(v, "://")
		if i < 0 {
			b.WriteString(v)
			return b.String()
		}
		b.WriteString(v[:i+3])
		v = v[i+3:]
		auth := v
		if j := strings.IndexAny(auth, "/?#, |"); j >= 0 {
			auth = auth[:j]
		}
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			v = v[at+1:]
		}
	}
}

// EnvNames lists the names FilterEnv would pass from environ (for odin
// doctor).
func (l *Launcher) EnvNames() []string {
	l = l.get()
	var names []string
	for _, kv := range FilterEnv(l.opts.Environ(), l.opts.PassEnv, l.opts.SecretEnv) {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// childEnv is the environment of a launched process: the filtered
// environment, the private caches, then spec.Env.
func (l *Launcher) childEnv(spec Spec) []string {
	env := FilterEnv(l.opts.Environ(), l.opts.PassEnv, l.opts.SecretEnv)
	env = append(env, l.cacheEnv(l.Status().Kind)...)
	return append(env, spec.Env...)
}

// cacheEnv points the toolchains' caches at the project's private cache:
// the Go build cache, npm's and pip's caches and XDG_CACHE_HOME are
// writable there, and the go command reads the user's own build cache
// beneath it through Odin's GOCACHEPROG (never writing to it); Go modules are extracted into a private module cache
// from the user's own module cache, which is offered read-only as the
// first GOPROXY (a file:// URL), so no download is needed for what the
// user already has and nothing a command does can plant code in the
// user's shared module cache.
func (l *Launcher) cacheEnv(kind Kind) []string {
	c := l.cacheDir()
	if c == "" {
		return nil
	}
	env := []string{
		"GOCACHE=" + filepath.Join(c, "go-build"),
		"GOMODCACHE=" + filepath.Join(c, "gomod"),
		"npm_config_cache=" + filepath.Join(c, "npm"),
		"XDG_CACHE_HOME=" + filepath.Join(c, "xdg"),
		"PIP_CACHE_DIR=" + filepath.Join(c, "pip"),
	}
	if l.homeModCache != "" && !within(c, l.homeModCache) {
		upstream := "https://proxy.golang.org,direct"
		for _, kv := range l.opts.Environ() {
			if v, ok := strings.CutPrefix(kv, "GOPROXY="); ok && v != "" && v != "off" {
				// A private proxy's token stays with Odin (see
				// hasURLCredentials): the go command is told the proxy,
				// which then answers it 401, not the token.
				upstream = stripURLCredentials(v)
			}
		}
		env = append(env, "GOPROXY=file://"+filepath.Join(l.homeModCache, "cache", "download")+","+upstream)
	}
	if gc := l.goCacheLower(c); gc != "" {
		exe := l.exe
		if kind == KindBubblewrap {
			exe = innerInit
		}
		if kv := goCacheProgEnv(exe, gc, filepath.Join(c, "go-build")); kv != "" {
			env = append(env, kv)
		}
	}
	if kind == KindBubblewrap {
		env = append(env, "TMPDIR=/tmp")
	} else {
		env = append(env, "TMPDIR="+filepath.Join(c, "tmp"))
	}
	return env
}

// goCacheLower is the user's Go build cache when sandboxed go commands
// may read it as the lower layer of their build cache: Odin's binary is
// there to serve it and it is not inside the private cache c. The first
// check of a project then reuses the standard library and the modules the
// user has already compiled (53 s of CPU against 0.46 s for the demo's
// first go vet under bubblewrap) instead of compiling them in an empty cache.
func (l *Launcher) goCacheLower(c string) string {
	if c == "" || l.exe == "" || l.homeGoCache == "" || within(c, l.homeGoCache) || within(l.homeGoCache, c) {
		return ""
	}
	return l.homeGoCache
}

// ScrubEnv filters entries a caller declared for a process (an MCP
// server's env) the way Odin's own environment is filtered, but without
// the allow list: it drops the variables whose names look like secrets or
// are the providers' keys, and those whose values equal the value of a
// secret in Odin's environment (a key copied through ${OPENAI_API_KEY}),
// except the names in keep, which the user declared on purpose.
func (l *Launcher) ScrubEnv(env, keep []string) []string {
	l = l.get()
	secretValues := map[string]bool{}
	for _, kv := range l.opts.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) >= 8 && IsSecret(k, l.opts.SecretEnv) {
			secretValues[v] = true
		}
	}
	var out []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if !slices.Contains(keep, k) && (IsSecret(k, l.opts.SecretEnv) || secretValues[v]) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

package repomap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// goroot returns $(go env GOROOT)/src/name, skipping when it is absent.
func gorootSrc(t testing.TB, name string) string {
	t.Helper()
	root := ""
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		root = strings.TrimSpace(string(out))
	}
	dir := filepath.Join(root, "src", filepath.FromSlash(name))
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the Go toolchain's %s is not here (%v)", dir, err)
	}
	return dir
}

// typeLine matches the map line of a definition whose signature starts
// with the given keyword and name, e.g. "type Request" or "class Session".
func hasDef(text, keyword, name string) bool {
	return regexp.MustCompile(`(?m)^  \d+ (\w+: )?` + regexp.QuoteMeta(keyword+" "+name) + `\b`).MatchString(text)
}

func TestNetHTTPMostReferencedWithinBudget(t *testing.T) {
	dir := gorootSrc(t, "net/http")
	m := New(dir, Options{})
	defer m.Close()
	res, err := m.Map(t.Context(), Request{Budget: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tokens > 1024 || int(len(res.Text)+3)/4 > 1024 {
		t.Errorf("map is %d tokens (%d bytes), over the budget of 1024", res.Tokens, len(res.Text))
	}
	for _, name := range []string{"Request", "Header", "ResponseWriter", "Handler", "Response"} {
		if !hasDef(res.Text, "type", name) {
			t.Errorf("type %s is not in the 1024-token map of net/http:\n%s", name, res.Text)
		}
	}
	if res.Shown == 0 || res.Shown >= res.Total {
		t.Errorf("shown %d of %d definitions: want a cut, not all or nothing", res.Shown, res.Total)
	}
	// Test helpers of net/http's tests are not what a model needs first.
	if strings.Contains(res.Text, "_test.go\n") {
		t.Errorf("a test file made the top of the map:\n%s", res.Text)
	}
	for _, budget := range []int{64, 256, 2048, 8192} {
		r, err := m.Map(t.Context(), Request{Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		if r.Tokens > budget {
			t.Errorf("budget %d: map is %d tokens", budget, r.Tokens)
		}
		if r.Refresh.Parsed != 0 {
			t.Errorf("budget %d: a second map of an unchanged tree parsed %d files", budget, r.Refresh.Parsed)
		}
	}
}

func TestNetHTTPScope(t *testing.T) {
	dir := gorootSrc(t, "net/http")
	m := New(dir, Options{})
	defer m.Close()
	res, err := m.Map(t.Context(), Request{Scope: "cookiejar", Budget: 512})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(res.Text), "\n")[1:] {
		if !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "cookiejar/") {
			t.Errorf("file %q is outside the scope cookiejar", line)
		}
	}
	if !hasDef(res.Text, "type", "Jar") {
		t.Errorf("cookiejar's Jar is missing from its scoped map:\n%s", res.Text)
	}
	if _, err := m.Map(t.Context(), Request{Scope: "../fmt"}); !errors.Is(err, ErrOutside) {
		t.Errorf("scope ../fmt: err = %v, want ErrOutside", err)
	}
}

// pythonTree is a Python package installed from a Debian package.
func pythonTree(t *testing.T) string {
	requireLanguage(t, "python")
	for _, d := range []string{"/usr/lib/python3/dist-packages/requests", "/usr/lib/python3/dist-packages/urllib3"} {
		if _, err := os.Stat(filepath.Join(d, "__init__.py")); err == nil {
			return d
		}
	}
	t.Skip("no Python tree from a Debian package here: apt-get install python3-requests to run this test")
	return ""
}

func TestPythonPackageMostReferenced(t *testing.T) {
	dir := pythonTree(t)
	m := New(dir, Options{})
	defer m.Close()
	res, err := m.Map(t.Context(), Request{Budget: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tokens > 1024 {
		t.Errorf("map is %d tokens, over the budget of 1024", res.Tokens)
	}
	want := map[string][]string{
		"requests": {"Session", "Request", "PreparedRequest", "RequestException"},
		"urllib3":  {"HTTPConnectionPool", "PoolManager", "HTTPResponse"},
	}[filepath.Base(dir)]
	for _, name := range want {
		if !hasDef(res.Text, "class", name) {
			t.Errorf("class %s is not in the 1024-token map of %s:\n%s", name, dir, res.Text)
		}
	}
}

// requireLanguage skips a test that needs lang when this build cannot
// parse it (no odin-sitter was found).
func requireLanguage(t *testing.T, lang string) {
	t.Helper()
	if !newLanguages(nil).supports(lang) {
		t.Skipf("no %s parser: odin-sitter not found", lang)
	}
}

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRankFollowsReferences(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"core/core.go": "package core\n\n// Widget is used everywhere.\ntype Widget struct{}\n\n// Lonely is used by nobody.\nfunc Lonely() {}\n",
		"a/a.go":       "package a\n\nimport \"x/core\"\n\nfunc A() core.Widget { return core.Widget{} }\n",
		"b/b.go":       "package b\n\nimport \"x/core\"\n\nfunc B(w core.Widget) {}\n",
		"c/c.go":       "package c\n\nimport \"x/core\"\n\nvar C core.Widget\n",
	})
	m := New(root, Options{})
	defer m.Close()
	res, err := m.Map(t.Context(), Request{Budget: 4096})
	if err != nil {
		t.Fatal(err)
	}
	widget, lonely := strings.Index(res.Text, "type Widget"), strings.Index(res.Text, "func Lonely")
	if widget < 0 || lonely < 0 || widget > lonely {
		t.Errorf("Widget (used by three packages) should come before Lonely (used by none):\n%s", res.Text)
	}
	first := strings.Split(res.Text, "\n")[1]
	if first != "core/core.go" {
		t.Errorf("first file = %q, want core/core.go (the one everything refers to)", first)
	}
	// Focus lifts a name the caller cares about.
	if top := rank(m.files, map[string]bool{"Lonely": true}, nil)[0].sym.Name; top != "Lonely" {
		t.Errorf("with focus on Lonely the best-ranked definition is %s", top)
	}
	if top := rank(m.files, nil, nil)[0].sym.Name; top != "Widget" {
		t.Errorf("without focus the best-ranked definition is %s, want Widget", top)
	}
}

func TestIncrementalRefreshParsesOnlyChangedFiles(t *testing.T) {
	requireLanguage(t, "python")
	root, cache := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{
		"one.go":            "package p\n\nfunc One() {}\n",
		"two.py":            "def two():\n    pass\n",
		"node_modules/x.js": "function vendored() {}\n",
		"notes.txt":         "not code\n",
	})
	m := New(root, Options{CacheDir: cache})
	st, err := m.Refresh(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(RefreshStats{Files: 2, Parsed: 2}, st); diff != "" {
		t.Errorf("first refresh (-want +got):\n%s", diff)
	}
	if st, _ = m.Refresh(t.Context()); st.Parsed != 0 {
		t.Errorf("refresh of an unchanged tree parsed %d files", st.Parsed)
	}
	writeFiles(t, root, map[string]string{"one.go": "package p\n\nfunc One() {}\n\nfunc Added(x int) string { return \"\" }\n"})
	if err := os.Remove(filepath.Join(root, "two.py")); err != nil {
		t.Fatal(err)
	}
	st, err = m.Refresh(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(RefreshStats{Files: 1, Parsed: 1, Removed: 1}, st); diff != "" {
		t.Errorf("refresh after one change and one removal (-want +got):\n%s", diff)
	}
	res, err := m.Map(t.Context(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "func Added(x int) string") || strings.Contains(res.Text, "two.py") {
		t.Errorf("map does not reflect the change:\n%s", res.Text)
	}
	m.Close()

	// A new Mapper on the same cache parses nothing that did not change.
	m2 := New(root, Options{CacheDir: cache})
	defer m2.Close()
	if st, err = m2.Refresh(t.Context()); err != nil || st.Parsed != 0 {
		t.Errorf("refresh from the cache file: %+v, %v; want nothing parsed", st, err)
	}
	entries, err := os.ReadDir(cache)
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache dir holds %v (%v), want one cache file", entries, err)
	}
	if info, _ := entries[0].Info(); info.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, want 0600", info.Mode().Perm())
	}
	// A corrupt cache is rebuilt, not an error.
	if err := os.WriteFile(filepath.Join(cache, entries[0].Name()), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	m3 := New(root, Options{CacheDir: cache})
	defer m3.Close()
	if st, err = m3.Refresh(t.Context()); err != nil || st.Parsed != 1 {
		t.Errorf("refresh over a corrupt cache: %+v, %v; want one file parsed", st, err)
	}
}

func TestBigFilesAreSkipped(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"small.go": "package p\n\nfunc Small() {}\n",
		"big.go":   "package p\n\nfunc Big() {}\n" + strings.Repeat("// filler\n", 200),
	})
	m := New(root, Options{MaxFileSize: 512})
	defer m.Close()
	res, err := m.Map(t.Context(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "Big") || !strings.Contains(res.Text, "func Small()") {
		t.Errorf("map:\n%s", res.Text)
	}
}

func TestUnreadableTreeIsAnError(t *testing.T) {
	m := New(filepath.Join(t.TempDir(), "missing"), Options{})
	defer m.Close()
	if _, err := m.Map(t.Context(), Request{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want not-exist", err)
	}
}

// defsOf parses src as lang and returns "kind parent.name | sig" lines.
func defsOf(t *testing.T, lang, src string) []string {
	t.Helper()
	l := newLanguages(nil)
	defer l.close()
	defs, _, err := l.parse(lang, []byte(src))
	if err != nil {
		t.Fatalf("%s: %v", lang, err)
	}
	var out []string
	for _, d := range defs {
		name := d.Name
		if d.Parent != "" {
			name = d.Parent + "." + name
		}
		out = append(out, d.Kind+" "+name+" | "+d.Sig)
	}
	slices.Sort(out)
	return out
}

// Files of a language the build cannot parse are counted and said, not
// silently dropped.
func TestUnsupportedLanguagesAreCounted(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.go": "package a\n\nfunc A() {}\n", "b.py": "def b():\n    pass\n"})
	m := New(root, Options{})
	defer m.Close()
	res, err := m.Map(t.Context(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if m.langs.supports("python") {
		if res.Refresh.Unsupported != 0 || !strings.Contains(res.Text, "def b()") {
			t.Errorf("python supported but: %+v\n%s", res.Refresh, res.Text)
		}
		return
	}
	if res.Refresh.Unsupported != 1 || !strings.Contains(res.Text, "1 files of languages this build cannot parse") {
		t.Errorf("unsupported python not reported: %+v\n%s", res.Refresh, res.Text)
	}
}

// Attack: a link inside the project to source outside it (or to a
// directory outside it) must not bring that code into the map.
func TestAttackLinksOutsideAreNotMapped(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.go": "package s\n\nfunc SecretCanary42() {}\n"})
	writeFiles(t, root, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	m := New(root, Options{})
	defer m.Close()
	res, err := m.Map(t.Context(), Request{Budget: 8192})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "SecretCanary42") || !strings.Contains(res.Text, "func A()") {
		t.Errorf("map:\n%s", res.Text)
	}
}

// A cancelled refresh is an error, and leaves the Mapper usable.
func TestCancelledRefresh(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("p%02d.go", i)] = fmt.Sprintf("package p\n\nfunc F%d() {}\n", i)
	}
	writeFiles(t, root, files)
	m := New(root, Options{Workers: 1})
	defer m.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Refresh(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	st, err := m.Refresh(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 50 || len(m.files) != 50 {
		t.Errorf("refresh after a cancelled one: %+v, %d files known; want all 50", st, len(m.files))
	}
}

// A prewarmed Mapper's next Map uses the prewarm's refresh (nothing is
// parsed again); the one after walks the tree again and sees an edit.
func TestPrewarm(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"one.go": "package p\n\nfunc One() {}\n"})
	m := New(root, Options{})
	defer m.Close()
	m.Prewarm(t.Context(), time.Minute)
	res, err := m.Map(t.Context(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "func One()") || res.Refresh.Parsed != 1 {
		t.Errorf("map after prewarm: parsed %d, text:\n%s", res.Refresh.Parsed, res.Text)
	}
	writeFiles(t, root, map[string]string{"one.go": "package p\n\nfunc One() {}\n\nfunc Two() {}\n"})
	if res, err = m.Map(t.Context(), Request{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "func Two()") || res.Refresh.Parsed != 1 {
		t.Errorf("second map did not refresh: parsed %d, text:\n%s", res.Refresh.Parsed, res.Text)
	}
}

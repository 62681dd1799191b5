package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rgPath returns the ripgrep binary or skips the test: parity tests need it
// (CI installs Debian's ripgrep).
func rgPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep (rg) is not installed; parity tests compare against it (apt-get install ripgrep)")
	}
	return p
}

// goSrc is the Go toolchain's own source tree, the real-world corpus the
// parity tests and benchmarks search (under the race detector, its net
// subtree only, to keep the run short).
func goSrc(t testing.TB) string {
	t.Helper()
	root := ""
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		root = strings.TrimSpace(string(out))
	}
	dir := filepath.Join(root, "src")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Skipf("Go source tree not found at %s", dir)
	}
	if raceEnabled {
		dir = filepath.Join(dir, "net")
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// runRg runs ripgrep inside dir, so it prints paths relative to dir, with
// a deterministic order. Exit status 1 (no match) is not an error.
func runRg(t testing.TB, rg, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(rg, append([]string{"--no-config", "--sort", "path"}, args...)...)
	cmd.Dir = dir
	// Keep the user's global git excludes out, as the Odin side does.
	empty := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+empty, "XDG_CONFIG_HOME="+empty)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && (ee.ExitCode() == 1 ||
		ee.ExitCode() == 2 && strings.Contains(stderr.String(), "No files were searched")) {
		return out
	}
	if err != nil {
		t.Fatalf("rg %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// grepCase is one search run through both Odin and ripgrep.
type grepCase struct {
	name    string
	pattern string
	mode    Mode
	n, i, u bool
	a, b    int
	glob    []string
	typ     string
}

func (c grepCase) rgArgs() []string {
	var args []string
	switch c.mode {
	case FilesWithMatches:
		args = append(args, "-l")
	case Count:
		args = append(args, "-c")
	}
	if c.n {
		args = append(args, "-n")
	}
	if c.i {
		args = append(args, "-i")
	}
	if c.u {
		args = append(args, "-U")
	}
	if c.a > 0 {
		args = append(args, "-A", fmt.Sprint(c.a))
	}
	if c.b > 0 {
		args = append(args, "-B", fmt.Sprint(c.b))
	}
	for _, g := range c.glob {
		args = append(args, "-g", g)
	}
	if c.typ != "" {
		args = append(args, "-t", c.typ)
	}
	return append(args, "-e", c.pattern)
}

func (c grepCase) run(t testing.TB, root string) []byte {
	t.Helper()
	m, err := Compile(c.pattern, MatchOptions{IgnoreCase: c.i, Multiline: c.u})
	if err != nil {
		t.Fatalf("Compile(%q): %v", c.pattern, err)
	}
	opts := GrepOptions{Matcher: m, Mode: c.mode, LineNumbers: c.n, Before: c.b, After: c.a, RelativePaths: true}
	if opts.Walk.Globs, err = NewGlobFilter(c.glob...); err != nil {
		t.Fatal(err)
	}
	if c.typ != "" {
		if opts.Walk.Types, err = NewTypeFilter(c.typ); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Grep(context.Background(), root, opts)
	if err != nil {
		t.Fatalf("Grep: %v", err)
	}
	return res.Output()
}

// lineDiff describes the first difference between two outputs.
func lineDiff(want, got []byte) string {
	w := strings.Split(string(want), "\n")
	g := strings.Split(string(got), "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("%d lines from rg, %d from Odin; first difference at line %d:\n  rg:   %q\n  odin: %q", len(w), len(g), i+1, wl, gl)
		}
	}
	return "identical"
}

func TestGrepParityGoSource(t *testing.T) {
	rg := rgPath(t)
	root := goSrc(t)
	cases := []grepCase{
		{name: "literal", pattern: "func main", n: true},
		{name: "literal without line numbers", pattern: "sync.Mutex"},
		{name: "literal dot is any char", pattern: "errors.New", n: true},
		{name: "regex", pattern: `func \w+Error\(`, n: true},
		{name: "regex anchored", pattern: `^import \($`, n: true},
		{name: "regex alternation", pattern: `TODO|FIXME|XXX`, n: true},
		{name: "regex without literal", pattern: `[0-9]{9,}`, n: true},
		{name: "unicode word class", pattern: `\w+世界`, n: true},
		{name: "case insensitive", pattern: "deadline exceeded", n: true, i: true},
		{name: "case insensitive with k and s", pattern: "kelvin|sigma", n: true, i: true},
		{name: "context", pattern: `panic\("unreachable`, n: true, a: 2, b: 2},
		{name: "after context", pattern: "go:linkname", n: true, a: 3},
		{name: "before context no numbers", pattern: "^// Deprecated:", b: 1},
		{name: "glob", pattern: "t.Parallel()", n: true, glob: []string{"*_test.go"}},
		{name: "glob braces and negation", pattern: "TEXT ·", glob: []string{"*.{s,h}", "!**/testdata/**"}, n: true},
		{name: "type", pattern: "copyright", i: true, typ: "md", n: true},
		{name: "files with matches", pattern: "goroutine leak", mode: FilesWithMatches},
		{name: "files with matches regex", pattern: `\bunsafe\.Pointer\(`, mode: FilesWithMatches},
		{name: "count", pattern: "func ", mode: Count},
		{name: "count case insensitive", pattern: "http", mode: Count, i: true},
		{name: "multiline", pattern: `func main\(\) \{\n\s+fmt\.`, n: true, u: true},
		{name: "word boundaries without literal", pattern: `\b[A-Z]{2,}[0-9]+\b`, mode: Count},
		{name: "blank lines", pattern: `^\s*$`, mode: Count},
		{name: "end anchor", pattern: `\{$`, mode: FilesWithMatches, glob: []string{"*.s"}},
		{name: "class then literal", pattern: `[A-Z][a-z]+Error\b`, n: true, glob: []string{"!*_test.go"}},
		{name: "fold alternation", pattern: `todo\(|fixme`, i: true, mode: Count},
		{name: "before context only", pattern: `^func init\(\)`, n: true, b: 2, typ: "go"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := runRg(t, rg, root, c.rgArgs()...)
			got := c.run(t, root)
			if !bytes.Equal(want, got) {
				t.Errorf("rg %s: output differs: %s", strings.Join(c.rgArgs(), " "), lineDiff(want, got))
			}
			if len(want) == 0 && !raceEnabled {
				t.Errorf("rg found nothing for %q: the case tests nothing", c.pattern)
			}
		})
	}
}

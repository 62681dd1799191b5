package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/workspace"
)

func writeTree(t testing.TB, root string, files map[string]string) {
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

// ignoreTree exercises every ignore rule ripgrep honours.
func ignoreTree() map[string]string {
	return map[string]string{
		".gitignore":             "*.log\n!keep.log\n/build\nout/\ndocs/**/*.html\n[Tt]mp*\n\\#literal\nspace\\ \n",
		".ignore":                "secret.txt\n",
		".rgignore":              "!important.log\n",
		"main.go":                "package main\n",
		"a.log":                  "log\n",
		"keep.log":               "keep\n",
		"important.log":          "important\n",
		"secret.txt":             "s\n",
		"build/x.go":             "package build\n",
		"src/build/y.go":         "package build\n",
		"out/o.txt":              "o\n",
		"src/out":                "a file named out\n",
		"docs/a/b/page.html":     "<p>\n",
		"docs/index.md":          "# docs\n",
		"Tmp1.txt":               "t\n",
		"tmpdir/z.txt":           "z\n",
		"#literal":               "hash\n",
		"space ":                 "trailing space\n",
		".hidden":                "h\n",
		".config/settings.json":  "{}\n",
		"src/.env":               "E=1\n",
		"src/lib/util.js":        "export {}\n",
		"src/lib/util.ts":        "export {}\n",
		"src/lib/.gitignore":     "*.ts\n!util.ts\ngen/\n",
		"src/lib/types.ts":       "type T = 1\n",
		"src/lib/gen/g.js":       "g\n",
		"vendor/.ignore":         "*\n!*.go\n",
		"vendor/v.go":            "package v\n",
		"vendor/v.c":             "int v;\n",
		"nested/.git/HEAD":       "ref\n",
		"nested/.gitignore":      "*.c\n",
		"nested/n.c":             "int n;\n",
		"nested/n.log":           "above the nested repo: not ignored by the outer .gitignore\n",
		"deep/a/b/c/d/e/f.txt":   "deep\n",
		"unicode/ünï.txt":        "u\n",
		"src/lib/util_test.js":   "test\n",
		"src/lib/Makefile":       "all:\n",
		"script.sh":              "#!/bin/sh\n",
		"docs/notes/README.md":   "readme\n",
		"docs/notes/readme.html": "<p>\n",
	}
}

func rgFiles(t *testing.T, rg, root string, args ...string) []string {
	t.Helper()
	out := runRg(t, rg, root, append([]string{"--files"}, args...)...)
	if len(out) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

func odinFiles(t *testing.T, root, pattern string, opts WalkOptions) []string {
	t.Helper()
	files, err := Files(t.Context(), root, pattern, opts)
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	var rels []string
	for _, f := range files {
		rels = append(rels, f.Rel)
	}
	slices.SortFunc(rels, ComparePaths)
	return rels
}

func TestWalkParityIgnoreRules(t *testing.T) {
	rg := rgPath(t)
	for _, git := range []bool{true, false} {
		root := t.TempDir()
		writeTree(t, root, ignoreTree())
		if git {
			writeTree(t, root, map[string]string{".git/HEAD": "ref\n", ".git/info/exclude": "script.sh\n"})
		}
		if err := os.Symlink("main.go", filepath.Join(root, "link.go")); err != nil {
			t.Fatal(err)
		}
		for _, pattern := range []string{"", "*.go", "!*.log", "src/**", "**/*.{js,ts}", "*.txt", "docs/*", "[a-m]*.go", "**/lib/*"} {
			t.Run(fmt.Sprintf("git=%v/glob=%q", git, pattern), func(t *testing.T) {
				var args []string
				if pattern != "" {
					args = []string{"-g", pattern}
				}
				want := rgFiles(t, rg, root, args...)
				got := odinFiles(t, root, pattern, WalkOptions{Ignore: noGlobal()})
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("files differ from rg --files %v (-rg +odin):\n%s", args, diff)
				}
			})
		}
	}
}

func TestWalkParityTypes(t *testing.T) {
	rg := rgPath(t)
	root := t.TempDir()
	writeTree(t, root, ignoreTree())
	for _, typ := range []string{"go", "js", "ts", "md", "make", "sh", "html"} {
		t.Run(typ, func(t *testing.T) {
			want := rgFiles(t, rg, root, "-t", typ)
			tf, err := NewTypeFilter(typ)
			if err != nil {
				t.Fatal(err)
			}
			got := odinFiles(t, root, "", WalkOptions{Types: tf, Ignore: noGlobal()})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("files differ from rg --files -t %s (-rg +odin):\n%s", typ, diff)
			}
		})
	}
}

func TestGlobParityGoSource(t *testing.T) {
	rg := rgPath(t)
	root := goSrc(t)
	for _, pattern := range []string{"*.go", "**/testdata/**/*.txt", "net/http/*.go", "*_test.{go,s}", "!*.go", "[A-Z]*"} {
		t.Run(pattern, func(t *testing.T) {
			want := rgFiles(t, rg, root, "-g", pattern)
			got := odinFiles(t, root, pattern, WalkOptions{})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rg --files -g %q differs (-rg +odin):\n%s", pattern, diff)
			}
		})
	}
}

// noGlobal keeps the user's global git excludes out of hermetic tests.
func noGlobal() workspace.RulesOptions { return workspace.RulesOptions{GlobalExcludes: "-"} }

func TestWalkOptions(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.txt": "", ".h/b.txt": "", "d1/d2/d3/c.txt": "", "d1/x.txt": "", ".gitignore": "x.txt\n", ".git/HEAD": "",
	})
	if err := os.Symlink("a.txt", filepath.Join(root, "l.txt")); err != nil {
		t.Fatal(err)
	}
	collect := func(opts WalkOptions) []string {
		var mu sync.Mutex
		var out []string
		err := Walk(t.Context(), root, opts, func(_ int, e Entry) error {
			mu.Lock()
			defer mu.Unlock()
			s := e.Rel
			if e.IsDir() {
				s += "/"
			}
			if e.Type&os.ModeSymlink != 0 {
				s += "@"
			}
			out = append(out, s)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(out, ComparePaths)
		return out
	}
	tests := []struct {
		name string
		opts WalkOptions
		want []string
	}{
		{"default", WalkOptions{}, []string{"a.txt", "d1/d2/d3/c.txt"}},
		{"hidden", WalkOptions{Hidden: true}, []string{".gitignore", ".h/b.txt", "a.txt", "d1/d2/d3/c.txt"}},
		{"no ignore", WalkOptions{NoIgnore: true}, []string{"a.txt", "d1/d2/d3/c.txt", "d1/x.txt"}},
		{"dirs and depth", WalkOptions{Dirs: true, MaxDepth: 2}, []string{"a.txt", "d1/", "d1/d2/"}},
		{"symlinks", WalkOptions{Symlinks: true, MaxDepth: 1}, []string{"a.txt", "l.txt@"}},
		{"one worker", WalkOptions{Workers: 1}, []string{"a.txt", "d1/d2/d3/c.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Ignore = noGlobal()
			if diff := cmp.Diff(tc.want, collect(tc.opts)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWalkStopsAndCancels(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = "x"
	}
	writeTree(t, root, files)
	var n atomic.Int32
	err := Walk(t.Context(), root, WalkOptions{}, func(int, Entry) error {
		if n.Add(1) == 5 {
			return ErrStop
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ErrStop: Walk returned %v, want nil", err)
	}
	boom := errors.New("boom")
	if err := Walk(t.Context(), root, WalkOptions{}, func(int, Entry) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("callback error: got %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Walk(ctx, root, WalkOptions{}, func(int, Entry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: got %v", err)
	}
	if err := Walk(t.Context(), filepath.Join(root, "missing"), WalkOptions{}, func(int, Entry) error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing root: got %v", err)
	}
}

func TestComparePaths(t *testing.T) {
	in := []string{"a.go", "a/b", "a", "a-b", "ab", "a/b/c", "A", "a/a"}
	slices.SortFunc(in, ComparePaths)
	want := []string{"A", "a", "a/a", "a/b", "a/b/c", "a-b", "a.go", "ab"}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGrepParityBinary compares the handling of files holding NUL bytes at
// many offsets, around ripgrep's 64 KiB buffer boundaries, with ripgrep's.
func TestGrepParityBinary(t *testing.T) {
	rg := rgPath(t)
	root := t.TempDir()
	rnd := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{
		"t1.txt": "ab\nxx\x00\n",
		"t2.txt": "abc\nxx\x00\n",
		"t3.txt": "a\nb\nab\x00\n",
		"t4.txt": "\x00hello\n",
		"t5.txt": "hello\n\x00",
	}
	for i := range 40 {
		var b bytes.Buffer
		size := 1000 + rnd.IntN(300_000)
		for b.Len() < size {
			n := rnd.IntN(120)
			if rnd.IntN(20) == 0 {
				b.WriteString("hello ")
			}
			b.WriteString(strings.Repeat("x", n))
			b.WriteByte('\n')
		}
		data := b.Bytes()
		at := rnd.IntN(len(data))
		if i%4 == 0 {
			at = 65536 + rnd.IntN(200) - 100
		}
		if at < len(data) {
			data[at] = 0
		}
		files[fmt.Sprintf("r%02d.txt", i)] = string(data)
	}
	writeTree(t, root, files)
	for _, c := range []grepCase{
		{name: "content", pattern: "hello", n: true},
		{name: "count", pattern: "hello", mode: Count},
		{name: "files", pattern: "hello", mode: FilesWithMatches},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := runRg(t, rg, root, c.rgArgs()...)
			got := c.run(t, root)
			if !bytes.Equal(want, got) {
				t.Errorf("rg %v differs: %s", c.rgArgs(), lineDiff(want, got))
			}
		})
	}
}

// TestGrepParityEdgeCases compares small hand-made files with ripgrep's
// output: context overlaps, files without a final newline, empty lines,
// CRLF, BOMs.
func TestGrepParityEdgeCases(t *testing.T) {
	rg := rgPath(t)
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.txt":     "one\ntwo foo\nthree\nfour\nfive\nsix foo\nseven\nfoo eight\n",
		"b.txt":     "x\nfoo\ny",
		"c.txt":     "foo\n\n\nfoo\n",
		"crlf.txt":  "foo\r\nbar\r\nfoo bar\r\n",
		"bom.txt":   "\xEF\xBB\xBFfoo first\nsecond foo\n",
		"u16.txt":   "\xFF\xFEf\x00o\x00o\x00\n\x00",
		"empty.txt": "",
		"multi.txt": "start\nbar(\n  baz)\nend bar(x)\nbar(\nbaz) bar(\n baz)\n",
		"uni.txt":   "Straße STRASSE\nKelvin \u212Aelvin\nſome sets\n",
	})
	cases := []grepCase{
		{name: "context 1", pattern: "foo", n: true, a: 1, b: 1},
		{name: "context 2", pattern: "foo", n: true, a: 2, b: 2},
		{name: "after only", pattern: "foo", a: 1},
		{name: "before only", pattern: "foo", n: true, b: 3},
		{name: "empty lines", pattern: "^$", n: true},
		{name: "end anchor crlf", pattern: "bar$", n: true},
		{name: "every line", pattern: "", n: true},
		{name: "count all", pattern: "o", mode: Count},
		{name: "multiline", pattern: `bar\(\s*baz`, n: true, u: true},
		{name: "multiline count", pattern: `bar\(\s*baz`, mode: Count, u: true},
		{name: "multiline context", pattern: `bar\(\s*baz`, n: true, u: true, a: 1, b: 1},
		{name: "multiline dotall", pattern: `(?s)start.*end`, n: true, u: true},
		{name: "fold kelvin", pattern: "kelvin", n: true, i: true},
		{name: "fold long s", pattern: "some", n: true, i: true},
		{name: "fold literal", pattern: "STRASSE", n: true, i: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := runRg(t, rg, root, c.rgArgs()...)
			got := c.run(t, root)
			if !bytes.Equal(want, got) {
				t.Errorf("rg %v differs: %s\nrg:\n%s\nodin:\n%s", c.rgArgs(), lineDiff(want, got), want, got)
			}
		})
	}
}

func TestGrepExplicitFile(t *testing.T) {
	rg := rgPath(t)
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"text.txt": "hello\nworld\nhello again\n",
		"bin.txt":  "hello\nwor\x00ld\nhello again\n",
		".hidden":  "hello hidden\n",
	})
	for _, name := range []string{"text.txt", "bin.txt", ".hidden"} {
		for _, c := range []grepCase{
			{name: "content", pattern: "hello", n: true},
			{name: "count", pattern: "hello", mode: Count},
			{name: "files", pattern: "hello", mode: FilesWithMatches},
		} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				path := filepath.Join(root, name)
				want := runRg(t, rg, root, append(c.rgArgs(), "-H", path)...)
				got := c.run(t, path)
				if !bytes.Equal(want, got) {
					t.Errorf("rg %v differs: %s", c.rgArgs(), lineDiff(want, got))
				}
			})
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		pattern string
		opts    MatchOptions
	}{
		{"a(b", MatchOptions{}},
		{"[z-a]", MatchOptions{}},
		{`a\nb`, MatchOptions{}},
		{"x{2,1}", MatchOptions{}},
	}
	for _, tc := range tests {
		if _, err := Compile(tc.pattern, tc.opts); !errors.Is(err, ErrPattern) {
			t.Errorf("Compile(%q) = %v, want ErrPattern", tc.pattern, err)
		}
	}
	if _, err := Compile(`a\nb`, MatchOptions{Multiline: true}); err != nil {
		t.Errorf("newline in multiline mode: %v", err)
	}
}

func TestPrefilterChoice(t *testing.T) {
	tests := []struct {
		pattern string
		opts    MatchOptions
		lits    []string
		exact   bool
	}{
		{"func main", MatchOptions{}, []string{"func main"}, true},
		{`func \w+Error\(`, MatchOptions{}, []string{"Error("}, false},
		{"TODO|FIXME", MatchOptions{}, []string{"TODO", "FIXME"}, true},
		{`[0-9]+`, MatchOptions{}, nil, false},
		{"a*b?", MatchOptions{}, nil, false},
		{"deadline", MatchOptions{IgnoreCase: true}, []string{"deadline"}, true},
		{"kelvin", MatchOptions{IgnoreCase: true}, []string{"kelvin"}, false},
		{"(foo)+barbaz", MatchOptions{}, []string{"barbaz"}, false},
		{"123", MatchOptions{IgnoreCase: true}, []string{"123"}, true},
	}
	for _, tc := range tests {
		m, err := Compile(tc.pattern, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		var lits []string
		for _, l := range m.lits {
			lits = append(lits, string(l.s))
		}
		if diff := cmp.Diff(tc.lits, lits); diff != "" || m.exact != tc.exact {
			t.Errorf("%q: literals (-want +got):\n%s exact=%v want %v", tc.pattern, diff, m.exact, tc.exact)
		}
	}
}

func TestUnicodeClasses(t *testing.T) {
	tests := []struct{ in, want string }{
		{`plain`, `plain`},
		{`\w+`, `[` + uniWord + `]+`},
		{`[\w.]`, `[` + uniWord + `.]`},
		{`\W`, `[^` + uniWord + `]`},
		{`[\W]`, `[\W]`},
		{`\d\s`, `[` + uniDigit + `][` + uniSpace + `]`},
		{`\\w`, `\\w`},
		{`\Q\w\E\w`, `\Q\w\E[` + uniWord + `]`},
		{`[]\w]`, `[]` + uniWord + `]`},
		{`[[:alpha:]\d]`, `[[:alpha:]` + uniDigit + `]`},
		{`\bx\b`, `\bx\b`},
	}
	for _, tc := range tests {
		if got := unicodeClasses(tc.in); got != tc.want {
			t.Errorf("unicodeClasses(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTypeFilter(t *testing.T) {
	if _, err := NewTypeFilter("nosuchtype"); err == nil || !strings.Contains(err.Error(), "go") {
		t.Errorf("unknown type: err = %v, want a list of known types", err)
	}
	f, err := NewTypeFilter("c")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"a.c": true, "a.h": true, "a.H": true, "a.h.in": true, "a.cc": false, "a.go": false} {
		if got := f.Match(name).String() == "whitelist"; got != want {
			t.Errorf("type c on %s: %v, want %v", name, got, want)
		}
	}
	if names := TypeNames(); !slices.Contains(names, "rust") || !slices.IsSorted(names) {
		t.Errorf("TypeNames lacks rust or is unsorted")
	}
}

func TestGrepMaxFileSize(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"big.txt":   strings.Repeat("needle\n", 100_000),
		"small.txt": "needle\n",
	})
	m, err := Compile("needle", MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Grep(t.Context(), root, GrepOptions{Matcher: m, Mode: FilesWithMatches, MaxFileSize: 300_000, RelativePaths: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Output()); got != "small.txt\n" || res.TooLarge != 1 || res.Searched != 2 {
		t.Errorf("output %q, too large %d, searched %d; want small.txt only, 1 too large, 2 searched", got, res.TooLarge, res.Searched)
	}
}

// TestGrepMaxRetained checks that bounded retention keeps a sorted prefix
// of the output and every line count.
func TestGrepMaxRetained(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = strings.Repeat("needle line\n", 50)
	}
	writeTree(t, root, files)
	m, err := Compile("needle", MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	full, err := Grep(t.Context(), root, GrepOptions{Matcher: m, RelativePaths: true})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 20_000
	capped, err := Grep(t.Context(), root, GrepOptions{Matcher: m, RelativePaths: true, MaxRetained: limit})
	if err != nil {
		t.Fatal(err)
	}
	if len(capped.Files) != 200 || len(full.Files) != 200 {
		t.Fatalf("files: capped %d, full %d, want 200", len(capped.Files), len(full.Files))
	}
	kept, dropping := 0, false
	for i, f := range capped.Files {
		if f.Path != full.Files[i].Path || f.Lines != 50 {
			t.Fatalf("file %d: %s with %d lines, want %s with 50", i, f.Path, f.Lines, full.Files[i].Path)
		}
		if f.Dropped {
			dropping = true
			continue
		}
		if dropping {
			t.Fatalf("file %d (%s) kept after a dropped one: not a prefix", i, f.Path)
		}
		if !bytes.Equal(f.Output, full.Files[i].Output) {
			t.Fatalf("kept output of %s differs", f.Path)
		}
		kept += len(f.Output)
	}
	if !dropping || kept < limit/2 || kept > limit+len(full.Files[0].Output) {
		t.Errorf("kept %d bytes (dropping %v), want between %d and about %d", kept, dropping, limit/2, limit)
	}
}

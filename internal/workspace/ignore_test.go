package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		glob string
		path string
		want bool
	}{
		{"foo", "foo", true},
		{"foo", "a/foo", false},
		{"*.go", "main.go", true},
		{"*.go", "a/main.go", false},
		{"*.go", ".go", true},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/main.go", true},
		{"**/*.go", "a/b/main.go/x", false},
		{"**/foo", "foo", true},
		{"**/foo", "a/foo", true},
		{"**/foo", "afoo", false},
		{"**/a/b", "x/a/b", true},
		{"**/a/b", "xa/b", false},
		{"src/**/*.ts", "src/a.ts", true},
		{"src/**/*.ts", "src/x/y/a.ts", true},
		{"src/**/*.ts", "lib/src/a.ts", false},
		{"src/**", "src/a/b", true},
		{"src/**", "src", false},
		{"**", "anything/at/all", true},
		{"a**b", "aXXb", true},
		{"a**b", "aX/Xb", false},
		{"?.go", "a.go", true},
		{"?.go", "ab.go", false},
		{"?", "/", false},
		{"[abc].go", "b.go", true},
		{"[abc].go", "d.go", false},
		{"[!abc].go", "d.go", true},
		{"[^abc].go", "a.go", false},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[]]x", "]x", true},
		{"[-a]x", "-x", true},
		{"[a-]x", "-x", true},
		{"*.{ts,tsx}", "a.tsx", true},
		{"*.{ts,tsx}", "a.ts", true},
		{"*.{ts,tsx}", "a.js", false},
		{"{src,lib}/**/*.go", "lib/x/a.go", true},
		{`\*.go`, "*.go", true},
		{`\*.go`, "a.go", false},
		{`a\[b`, "a[b", true},
		{"a,b", "a,b", true},
		{"a}b", "a}b", true},
		{"*_test.go", "x_test.go", true},
		{"**/*_test.go", "a/x_test.go", true},
		{"**/*.{c,h}", "a/b.h", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "ab", false},
	}
	for _, tc := range tests {
		g, err := CompileGlob(tc.glob)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", tc.glob, err)
		}
		if got := g.Match(tc.path); got != tc.want {
			t.Errorf("glob %q match %q = %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

func TestGlobAdversarial(t *testing.T) {
	// Exponential for naive backtracking; must answer promptly.
	g, err := CompileGlob(strings.Repeat("*a", 30) + "*c")
	if err != nil {
		t.Fatal(err)
	}
	if g.Match(strings.Repeat("a", 200) + "b") {
		t.Error("matched a path without the final c")
	}
	if !g.Match(strings.Repeat("a", 60) + "c") {
		t.Error("did not match")
	}
	r, err := CompileGlob(strings.Repeat("**/a/", 20) + "*")
	if err != nil {
		t.Fatal(err)
	}
	if r.Match(strings.Repeat("a/", 100) + "b/") {
		t.Error("matched a path ending in a slash")
	}
}

func TestGlobErrors(t *testing.T) {
	for _, p := range []string{"[abc", "{a,b", "{a,{b}}", `foo\`, "[b-a]"} {
		if _, err := CompileGlob(p); !errors.Is(err, ErrGlob) {
			t.Errorf("CompileGlob(%q) error = %v, want ErrGlob", p, err)
		}
	}
}

func TestIgnoreFileMatch(t *testing.T) {
	const content = `# comment
*.log
!keep.log
/build
out/
docs/*.html
**/tmp/**
\#hash
\!bang
trailing   
escaped\ 
[Cc]ache
logs/**/debug
`
	f := ParseIgnore("/p", []byte(content))
	if len(f.Errors) != 0 {
		t.Fatalf("errors: %v", f.Errors)
	}
	tests := []struct {
		path  string
		isDir bool
		want  Match
	}{
		{"a.log", false, MatchIgnore},
		{"x/y/a.log", false, MatchIgnore},
		{"keep.log", false, MatchWhitelist},
		{"x/keep.log", false, MatchWhitelist},
		{"build", true, MatchIgnore},
		{"build", false, MatchIgnore},
		{"x/build", true, MatchNone},
		{"out", true, MatchIgnore},
		{"out", false, MatchNone},
		{"x/out", true, MatchIgnore},
		{"docs/a.html", false, MatchIgnore},
		{"docs/x/a.html", false, MatchNone},
		{"x/docs/a.html", false, MatchNone},
		{"a/tmp/b", false, MatchIgnore},
		{"tmp/b/c", false, MatchIgnore},
		{"tmp", true, MatchNone},
		{"#hash", false, MatchIgnore},
		{"!bang", false, MatchIgnore},
		{"trailing", false, MatchIgnore},
		{"escaped ", false, MatchIgnore},
		{"cache", true, MatchIgnore},
		{"Cache", false, MatchIgnore},
		{"logs/debug", false, MatchIgnore},
		{"logs/a/b/debug", false, MatchIgnore},
		{"main.go", false, MatchNone},
	}
	for _, tc := range tests {
		if got := f.Match(tc.path, tc.isDir); got != tc.want {
			t.Errorf("Match(%q, dir=%v) = %v, want %v", tc.path, tc.isDir, got, tc.want)
		}
	}
}

func TestIgnoreFileOddLines(t *testing.T) {
	// Lines that reduce to nothing must neither panic nor match files.
	f := ParseIgnore("/p", []byte("/\n!\n!/\n\\\n/ \n\\ \n**\n"))
	for _, p := range []string{"a", "a/b", ".x"} {
		if got := f.Match(p, false); got != MatchIgnore { // the "**" line ignores everything
			t.Errorf("Match(%q) = %v, want ignore (from **)", p, got)
		}
	}
	g := ParseIgnore("/p", []byte("/\n!/\n"))
	if got := g.Match("a", false); got != MatchNone {
		t.Errorf("lone slash lines: Match = %v, want none", got)
	}
	if _, err := CompileGlob(""); err != nil {
		t.Errorf("CompileGlob(\"\"): %v", err)
	}
}

func TestIgnoreFileBadLineSkipped(t *testing.T) {
	f := ParseIgnore("/p", []byte("[oops\n*.tmp\n"))
	if len(f.Errors) != 1 {
		t.Fatalf("errors = %v, want one", f.Errors)
	}
	if got := f.Match("a.tmp", false); got != MatchIgnore {
		t.Errorf("good line after a bad one: Match = %v, want ignore", got)
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
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

func TestRulesLayering(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		dirs  []string // directories to descend into, in order
		path  string   // relative to root
		isDir bool
		want  Match
	}{
		{
			name:  "gitignore outside a repo is not used",
			files: map[string]string{".gitignore": "*.log\n"},
			path:  "a.log", want: MatchNone,
		},
		{
			name:  "gitignore inside a repo",
			files: map[string]string{".git/HEAD": "", ".gitignore": "*.log\n"},
			path:  "a.log", want: MatchIgnore,
		},
		{
			name:  ".ignore applies without git",
			files: map[string]string{".ignore": "*.log\n"},
			path:  "a.log", want: MatchIgnore,
		},
		{
			name:  ".rgignore beats .ignore",
			files: map[string]string{".ignore": "*.log\n", ".rgignore": "!a.log\n"},
			path:  "a.log", want: MatchWhitelist,
		},
		{
			name:  ".ignore beats .gitignore",
			files: map[string]string{".git/HEAD": "", ".gitignore": "!a.log\n", ".ignore": "*.log\n"},
			path:  "a.log", want: MatchIgnore,
		},
		{
			name: "deeper gitignore whitelists",
			files: map[string]string{
				".git/HEAD": "", ".gitignore": "*.log\n", "sub/.gitignore": "!keep.log\n",
			},
			dirs: []string{"sub"},
			path: "sub/keep.log", want: MatchWhitelist,
		},
		{
			name: "nested gitignore is relative to its directory",
			files: map[string]string{
				".git/HEAD": "", "sub/.gitignore": "/gen\n",
			},
			dirs: []string{"sub"},
			path: "sub/gen", isDir: true, want: MatchIgnore,
		},
		{
			name: "info/exclude",
			files: map[string]string{
				".git/HEAD": "", ".git/info/exclude": "secret\n",
			},
			path: "secret", want: MatchIgnore,
		},
		{
			name: "gitignore above a nested repository root does not apply inside it",
			files: map[string]string{
				".git/HEAD": "", ".gitignore": "*.log\n", "inner/.git/HEAD": "",
			},
			dirs: []string{"inner"},
			path: "inner/a.log", want: MatchNone,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tc.files)
			r := LoadRules(root, RulesOptions{GlobalExcludes: "-", NoParents: true})
			dir := root
			for _, d := range tc.dirs {
				dir = filepath.Join(dir, d)
				r = r.descendFromDisk(dir)
			}
			if got := r.Match(filepath.Join(root, tc.path), tc.isDir); got != tc.want {
				t.Errorf("Match(%s) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

func TestRulesParentsAndGlobal(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".git/HEAD":  "",
		".gitignore": "*.gen\n",
		"global":     "*.bak\n",
		"sub/x.go":   "",
	})
	sub := filepath.Join(root, "sub")
	r := LoadRules(sub, RulesOptions{GlobalExcludes: filepath.Join(root, "global")})
	if !r.InGitRepo() {
		t.Fatal("InGitRepo = false inside a repository")
	}
	if got := r.Match(filepath.Join(sub, "a.gen"), false); got != MatchIgnore {
		t.Errorf("parent .gitignore: got %v, want ignore", got)
	}
	if got := r.Match(filepath.Join(sub, "a.bak"), false); got != MatchIgnore {
		t.Errorf("global excludes: got %v, want ignore", got)
	}
	if got := r.Match(filepath.Join(sub, "x.go"), false); got != MatchNone {
		t.Errorf("plain file: got %v, want none", got)
	}
	noParents := LoadRules(sub, RulesOptions{GlobalExcludes: "-", NoParents: true})
	if got := noParents.Match(filepath.Join(sub, "a.gen"), false); got != MatchNone {
		t.Errorf("NoParents: got %v, want none", got)
	}
}

func TestExcludesFromConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config")
	writeFiles(t, dir, map[string]string{"config": "[user]\n\tname = x\n[core]\n\texcludesFile = \"/tmp/ex\"\n"})
	if got := excludesFromConfig(p); got != "/tmp/ex" {
		t.Errorf("excludesFromConfig = %q, want /tmp/ex", got)
	}
}

func BenchmarkIgnoreMatch(b *testing.B) {
	f := ParseIgnore("/p", []byte("*.log\n/build\nnode_modules/\ndocs/**/*.html\n!keep.log\n[Tt]mp\n"))
	paths := []string{"src/a/b/main.go", "x/keep.log", "node_modules", "docs/a/b/c.html", "README.md"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range paths {
			f.Match(p, false)
		}
	}
}

// TestGlobTokensAgreeWithRegexp checks the direct glob matcher against the
// regexp translation of the same tokens on many globs and paths.
func TestGlobTokensAgreeWithRegexp(t *testing.T) {
	globs := []string{
		"*.go", "**/*.go", "a/**/b", "a/**", "**/a", "*a*b*", "a*/b*/c", "?*.txt", "[a-c]*/[!x]?",
		"{src,lib}/**/*.{ts,tsx}", "**/test{data,s}/**", "x/**/**/y", "**/**", "*/*", "a**b", "**a",
		"{,a}b", "é*", "*_test.go", "[^/]x", "foo/**/*_{a,b}.c", "**/*",
	}
	paths := []string{"", "a", "b", "ab", "a/b", "a/x/b", "a/x/y/b", "ab/b", "x.go", "a/x.go", "a/b/x.go",
		"src/a.ts", "src/x/y/a.tsx", "lib/a.ts", "testdata/x", "a/tests/b/c", "x/y", "x/a/y", "aXXb", "aX/Xb",
		"éa", "é/a", "x_test.go", "a/x_test.go", "/x", "ax", "foo/a/b/x_a.c", "foo/x_b.c", "b/c", "c", "a/", "/"}
	for _, g := range globs {
		toks, err := parseGlob(g)
		if err != nil {
			t.Fatalf("parse %q: %v", g, err)
		}
		var b strings.Builder
		b.WriteString("^")
		writeTokens(&b, toks)
		b.WriteString("$")
		re := regexp.MustCompile(b.String())
		cg, err := CompileGlob(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			want := re.MatchString(p) || cg.kind == globAll // globset's special case: a lone ** matches everything
			if got := cg.Match(p); got != want {
				t.Errorf("glob %q (kind %d) on %q: matcher %v, want %v", g, cg.kind, p, got, want)
			}
		}
	}
}

func BenchmarkGlobMatch(b *testing.B) {
	g, err := CompileGlob("**/testdata/**/*.txt")
	if err != nil {
		b.Fatal(err)
	}
	paths := []string{"cmd/go/testdata/script/build.txt", "net/http/server.go", "a/b/c/d/e/f/g.txt"}
	for b.Loop() {
		for _, p := range paths {
			g.Match(p)
		}
	}
}

// FuzzGlob checks that any pattern compiles or fails cleanly, and that the
// fast matchers agree with the regexp translation of the same tokens.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"**/*.go", "a/b.go"}, {"{a,b}/**", "a/x"}, {"[!a-c]?", "dx"}, {`\*`, "*"}, {"a/**/b", "a/b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		ParseIgnore("/p", []byte(pattern)) // must not panic
		g, err := CompileGlob(pattern)
		if err != nil {
			return
		}
		toks, err := parseGlob(pattern)
		if err != nil {
			t.Fatalf("CompileGlob accepted %q but parseGlob fails: %v", pattern, err)
		}
		var b strings.Builder
		b.WriteString("^")
		writeTokens(&b, toks)
		b.WriteString("$")
		re, err := regexp.Compile(b.String())
		if err != nil {
			return // e.g. a class the regexp package rejects
		}
		want := re.MatchString(path) || g.kind == globAll
		if !utf8.ValidString(path) || !utf8.ValidString(pattern) {
			return // the two disagree on how invalid UTF-8 decodes
		}
		if got := g.Match(path); got != want {
			t.Fatalf("glob %q (kind %d) on %q: %v, regexp %v", pattern, g.kind, path, got, want)
		}
	})
}

package search

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// TestLineDFAAgreesWithRegexp checks the DFA against Go's regexp on every
// pattern and line below, plus random lines: the two must agree on whether
// each line matches.
func TestLineDFAAgreesWithRegexp(t *testing.T) {
	patterns := []string{
		``, `a`, `abc`, `a|b`, `^abc`, `abc$`, `^$`, `^`, `$`, `\bfoo\b`, `\Bfoo`, `foo\B`,
		`[0-9]{3,}`, `x*`, `(?i)straße`, `(?i)k`, `[^a-z]+$`, `^\s*//`, `a.c`, `\w+世界`,
		`(foo|bar)baz`, `colou?r`, `^(a|b)*c$`, `\b\d+\b`, `é+`, `[α-ω]+`, `(?i)ΣΑΣ`, `.`,
		`\btest_\w+`, `^func \(?\w`, `(a+)+b`, `[[:upper:]]{2}`, `\pL\d`, `x$|^y`,
	}
	lines := []string{
		"", "a", "abc", "xabcx", "foo", "foo bar", "foobar", "afoo", "foo_", "12", "123", "1234 x",
		"STRASSE", "straße", "Kelvin", "\u212A", "ABC", "abc ", "  // comment", "a\tc", "你好世界",
		"hello世界", "barbaz", "foobaz", "color", "colour", "ababc", "abab", "x", "y", "yx",
		"ééé", "αβγ", "σας", "ΣΑΣ", "test_case", "func (r *R) M", "func main", "aaaaaaaaaaaaab",
		"HTTP", "\xff\xfe", "a\xffc", "é", "x9", "a1",
	}
	rnd := rand.New(rand.NewPCG(7, 9))
	alphabet := []rune("abcfoxyz019 _\tK\u212AßSé世界()/")
	for range 300 {
		n := rnd.IntN(12)
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[rnd.IntN(len(alphabet))])
		}
		lines = append(lines, b.String())
	}
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		tree, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := syntax.Compile(tree.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		d := newLineDFA(prog)
		for _, line := range lines {
			want := re.MatchString(line)
			if got := d.lineMatches([]byte(line)); got != want {
				t.Errorf("pattern %q line %q: DFA says %v, regexp says %v", p, line, got, want)
			}
		}
		// nextMatch over all lines at once finds exactly the matching lines.
		data := []byte(strings.Join(lines, "\n"))
		var got, want []int
		for i, line := range lines {
			if re.MatchString(line) {
				want = append(want, i)
			}
		}
		for pos := 0; pos <= len(data); {
			ls, le, ok := d.nextMatch(data, pos)
			if !ok {
				break
			}
			got = append(got, strings.Count(string(data[:ls]), "\n"))
			pos = le + 1
		}
		// An empty final line is not a line to ripgrep.
		if len(lines[len(lines)-1]) == 0 && len(want) > 0 && want[len(want)-1] == len(lines)-1 {
			want = want[:len(want)-1]
		}
		if len(got) != len(want) {
			t.Errorf("pattern %q: nextMatch found %d lines, want %d", p, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("pattern %q: nextMatch line %d, want %d", p, got[i], want[i])
				break
			}
		}
	}
}

func TestLineDFABoundedStates(t *testing.T) {
	// (a|b)*a(a|b){12} needs 2^13 DFA states: the cache must reset, not
	// grow without bound, and still answer correctly.
	p := `(a|b)*a(a|b){12}`
	re := regexp.MustCompile(p)
	tree, _ := syntax.Parse(p, syntax.Perl)
	prog, _ := syntax.Compile(tree.Simplify())
	d := newLineDFA(prog)
	rnd := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		var b strings.Builder
		for range 40 {
			b.WriteByte("ab"[rnd.IntN(2)])
		}
		line := b.String()
		if got, want := d.lineMatches([]byte(line)), re.MatchString(line); got != want {
			t.Fatalf("line %q: DFA %v, regexp %v", line, got, want)
		}
		if len(d.states) > maxDFAStates {
			t.Fatalf("DFA cache holds %d states, over the bound %d", len(d.states), maxDFAStates)
		}
	}
}

// FuzzLineDFA compares the DFA with Go's regexp on arbitrary patterns and
// lines (`go test -fuzz FuzzLineDFA`); the seeds run as a normal test.
func FuzzLineDFA(f *testing.F) {
	for _, seed := range [][2]string{
		{`\bfoo\b`, "a foo b"}, {`^a|b$`, "cab"}, {`(?i)k+`, "\u212A"}, {`[^\x00-\x7f]`, "é"},
		{`x*`, ""}, {`\B`, "ab"}, {`(a|ab)(c|bcd)`, "abcd"}, {`.`, "\xff"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, line string) {
		if strings.ContainsRune(line, '\n') || len(pattern) > 64 {
			return
		}
		tree, err := syntax.Parse(pattern, syntax.Perl)
		if err != nil {
			return
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		prog, err := syntax.Compile(tree.Simplify())
		if err != nil {
			return
		}
		if got, want := newLineDFA(prog).lineMatches([]byte(line)), re.MatchString(line); got != want {
			t.Fatalf("pattern %q line %q: DFA %v, regexp %v", pattern, line, got, want)
		}
	})
}

// FuzzSearchLines compares the whole line search (literal prefilters,
// case-folded scans, the DFA) with Go's regexp run on each line.
func FuzzSearchLines(f *testing.F) {
	for _, seed := range []struct {
		pattern, data string
		fold          bool
	}{
		{"deadline exceeded", "x\nDeadline Exceeded\nno\n", true},
		{"kelvin", "\u212Aelvin\nkelvin", true},
		{"func main", "func main()\n\tfunc mainly\nfunc  main", false},
		{"TODO|FIXME", "a TODO\nfixme\nFIXME b", false},
		{"ab", "xAbx\naB\nab", true},
		{`[0-9]{3}`, "12\n123\n", false},
	} {
		f.Add(seed.pattern, seed.data, seed.fold)
	}
	f.Fuzz(func(t *testing.T, pattern, data string, fold bool) {
		if len(pattern) > 64 || len(data) > 4096 {
			return
		}
		m, err := Compile(pattern, MatchOptions{IgnoreCase: fold})
		if err != nil {
			return
		}
		w := &grepWorker{opts: &GrepOptions{Matcher: m, Mode: Content}, dfa: newLineDFA(m.prog)}
		if m.lits != nil {
			w.cur = newCursor(m.lits)
		}
		w.search([]byte(data), false)
		var got []int
		for _, b := range w.matches {
			got = append(got, b.line)
		}
		var want []int
		lines := strings.Split(data, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		for i, line := range lines {
			if m.re.MatchString(line) {
				want = append(want, i+1)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pattern %q fold=%v data %q: lines %v, want %v", pattern, fold, data, got, want)
		}
	})
}

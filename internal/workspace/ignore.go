package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The ignore rules follow ripgrep (the ignore and globset crates) rather
// than git where the two differ, because Odin's search tools promise
// ripgrep's results: .gitignore, .git/info/exclude and the global excludes
// file apply only inside a git repository, .ignore and .rgignore apply
// everywhere, a deeper directory's file beats a shallower one, and within a
// file the last matching line wins.

// Ignore file names, in increasing order of precedence.
const (
	GitignoreName = ".gitignore"
	IgnoreName    = ".ignore"
	RgignoreName  = ".rgignore"
)

// ErrGlob reports a malformed glob pattern.
var ErrGlob = errors.New("invalid glob")

// Glob is a compiled glob with globset's semantics as ripgrep configures
// them: `*` and `?` never match `/`, `**` matches any number of whole path
// components, `[...]` classes (negated by `!` or `^`), `{a,b}` alternates
// and `\` escapes. A Glob matches a whole slash-separated path. It is
// immutable and safe for concurrent use.
type Glob struct {
	pattern string
	kind    globKind
	lit     string
	seqs    [][]token // globTokens: alternatives with {a,b} expanded
	re      *regexp.Regexp
}

type globKind uint8

const (
	globRegexp     globKind = iota
	globTokens              // matched by matchTokens over seqs
	globExact               // path == lit
	globAnyExact            // last components equal lit (**/lit)
	globAnySuffix           // last component ends with lit (**/*lit)
	globBaseSuffix          // single component ending with lit (*lit)
	globAll                 // **
)

// String returns the pattern the Glob was compiled from.
func (g *Glob) String() string { return g.pattern }

// Match reports whether the slash-separated path matches the whole glob.
func (g *Glob) Match(path string) bool {
	switch g.kind {
	case globExact:
		return path == g.lit
	case globAnyExact:
		return path == g.lit || (len(path) > len(g.lit) && path[len(path)-len(g.lit)-1] == '/' && strings.HasSuffix(path, g.lit))
	case globAnySuffix:
		return strings.HasSuffix(path, g.lit)
	case globBaseSuffix:
		return strings.HasSuffix(path, g.lit) && strings.IndexByte(path, '/') < 0
	case globAll:
		return true
	case globTokens:
		for _, seq := range g.seqs {
			if matchTokens(seq, path) {
				return true
			}
		}
		return false
	}
	return g.re.MatchString(path)
}

type tokKind uint8

const (
	tokLit tokKind = iota
	tokAny
	tokStar
	tokRecPrefix // **/ at the start
	tokRecSuffix // /** at the end
	tokRecMiddle // /**/
	tokClass
	tokAlt
	tokStr // a literal run, after expandAlternates
)

type token struct {
	kind    tokKind
	ch      rune
	str     string
	negated bool
	ranges  [][2]rune
	alts    [][]token
}

// CompileGlob compiles pattern as one whole-path glob (no gitignore
// processing: use ParseIgnore or IgnoreFile.AddLine for that).
func CompileGlob(pattern string) (*Glob, error) {
	toks, err := parseGlob(pattern)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrGlob, pattern, err)
	}
	g := &Glob{pattern: pattern}
	if len(toks) == 0 { // matches the empty path only
		g.kind = globExact
		return g, nil
	}
	if lit, ok := literalTokens(toks); ok {
		g.kind, g.lit = globExact, lit
		return g, nil
	}
	if len(toks) == 1 && toks[0].kind == tokRecPrefix {
		g.kind = globAll
		return g, nil
	}
	if toks[0].kind == tokRecPrefix {
		if lit, ok := literalTokens(toks[1:]); ok {
			g.kind, g.lit = globAnyExact, lit
			return g, nil
		}
		if len(toks) > 2 && toks[1].kind == tokStar {
			if lit, ok := literalTokens(toks[2:]); ok && !strings.Contains(lit, "/") {
				g.kind, g.lit = globAnySuffix, lit
				return g, nil
			}
		}
	}
	if len(toks) > 1 && toks[0].kind == tokStar {
		if lit, ok := literalTokens(toks[1:]); ok && !strings.Contains(lit, "/") {
			g.kind, g.lit = globBaseSuffix, lit
			return g, nil
		}
	}
	// A direct token matcher is several times faster than Go's regexp
	// backtracker on paths; regexp remains for huge alternations.
	if seqs, ok := expandAlternates(toks, maxGlobAlternatives); ok {
		g.kind, g.seqs = globTokens, seqs
		return g, nil
	}
	var b strings.Builder
	b.WriteString(`^`)
	writeTokens(&b, toks)
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrGlob, pattern, err)
	}
	g.re = re
	return g, nil
}

// maxGlobAlternatives bounds the token sequences {a,b} groups expand to.
const maxGlobAlternatives = 64

// expandAlternates turns a token list with alternate groups into the list
// of plain sequences it stands for; literal runs are merged into strings.
func expandAlternates(toks []token, limit int) ([][]token, bool) {
	seqs := [][]token{nil}
	for _, t := range toks {
		if t.kind != tokAlt {
			for i := range seqs {
				seqs[i] = appendToken(seqs[i], t)
			}
			continue
		}
		var next [][]token
		for _, s := range seqs {
			for _, alt := range t.alts {
				seq := append([]token(nil), s...)
				for _, at := range alt {
					seq = appendToken(seq, at)
				}
				next = append(next, seq)
			}
		}
		if len(next) > limit {
			return nil, false
		}
		seqs = next
	}
	return seqs, true
}

// appendToken appends t, merging adjacent literals into one string token.
func appendToken(seq []token, t token) []token {
	if t.kind == tokLit {
		if n := len(seq); n > 0 && seq[n-1].kind == tokStr {
			seq[n-1].str += string(t.ch)
			return seq
		}
		return append(seq, token{kind: tokStr, str: string(t.ch)})
	}
	return append(seq, t)
}

// matchTokens reports whether path matches the token sequence whole,
// with the meaning writeTokens gives the tokens as a regexp.
func matchTokens(seq []token, path string) bool {
	m := tokenMatcher{seq: seq, path: path}
	branches := 0
	for _, t := range seq {
		switch t.kind {
		case tokStar, tokRecPrefix, tokRecSuffix, tokRecMiddle:
			branches++
		}
	}
	// Backtracking over several stars is exponential on adversarial input
	// (a hostile .gitignore, say). Remembering the states that failed, and
	// expressing every loop as one step plus a state, bounds the work by
	// the number of (token, offset) states.
	if branches >= 2 {
		n := (len(seq) + 1) * (len(path) + 1)
		var small [512]uint8
		if n <= len(small) {
			m.failed = small[:n]
		} else {
			m.failed = make([]uint8, n)
		}
	}
	return m.match(0, 0)
}

type tokenMatcher struct {
	seq  []token
	path string
	// failed marks states known not to match: bit 0 for match(ti, pi),
	// bit 1 for afterSlash(ti, pi).
	failed []uint8
}

func (m *tokenMatcher) key(ti, pi int) int { return ti*(len(m.path)+1) + pi }

// match reports whether seq[ti:] matches path[pi:].
func (m *tokenMatcher) match(ti, pi int) bool {
	if m.failed == nil {
		return m.step(ti, pi)
	}
	k := m.key(ti, pi)
	if m.failed[k]&1 != 0 {
		return false
	}
	if m.step(ti, pi) {
		return true
	}
	m.failed[k] |= 1
	return false
}

// afterSlash reports whether seq[ti:] matches path[j:] for pi itself or
// for some j just after a '/' at or beyond pi: the tail of `.*/`.
func (m *tokenMatcher) afterSlash(ti, pi int) bool {
	var k int
	if m.failed != nil {
		k = m.key(ti, pi)
		if m.failed[k]&2 != 0 {
			return false
		}
	}
	ok := m.match(ti, pi)
	if !ok {
		if j := strings.IndexByte(m.path[pi:], '/'); j >= 0 {
			ok = m.afterSlash(ti, pi+j+1)
		}
	}
	if !ok && m.failed != nil {
		m.failed[k] |= 2
	}
	return ok
}

// step matches seq[ti:] against path[pi:].
func (m *tokenMatcher) step(ti, pi int) bool {
	path := m.path
	for ti < len(m.seq) {
		t := &m.seq[ti]
		ti++
		switch t.kind {
		case tokStr:
			if !strings.HasPrefix(path[pi:], t.str) {
				return false
			}
			pi += len(t.str)
		case tokAny, tokClass:
			if pi >= len(path) {
				return false
			}
			r, size := utf8.DecodeRuneInString(path[pi:])
			if t.kind == tokAny && r == '/' || t.kind == tokClass && !t.matchClass(r) {
				return false
			}
			pi += size
		case tokStar: // [^/]*: stop here, or take one rune and stay
			if ti == len(m.seq) {
				return !strings.Contains(path[pi:], "/")
			}
			if m.match(ti, pi) {
				return true
			}
			if pi >= len(path) || path[pi] == '/' {
				return false
			}
			_, size := utf8.DecodeRuneInString(path[pi:])
			return m.match(ti-1, pi+size)
		case tokRecPrefix: // (?:/?|.*/)
			if m.match(ti, pi) || strings.HasPrefix(path[pi:], "/") && m.match(ti, pi+1) {
				return true
			}
			j := strings.IndexByte(path[pi:], '/')
			return j >= 0 && m.afterSlash(ti, pi+j+1)
		case tokRecMiddle: // (?:/|/.*/)
			if !strings.HasPrefix(path[pi:], "/") {
				return false
			}
			return m.afterSlash(ti, pi+1)
		case tokRecSuffix: // /.*
			if !strings.HasPrefix(path[pi:], "/") {
				return false
			}
			if ti == len(m.seq) {
				return !strings.Contains(path[pi:], "\n")
			}
			// Only {a/**,b}-style alternates put tokens after "/**".
			for i := pi + 1; i <= len(path); i++ {
				if m.match(ti, i) {
					return true
				}
				if i < len(path) && path[i] == '\n' {
					return false
				}
			}
			return false
		}
	}
	return pi == len(path)
}

func (t *token) matchClass(r rune) bool {
	in := false
	for _, rg := range t.ranges {
		if rg[0] <= r && r <= rg[1] {
			in = true
			break
		}
	}
	return in != t.negated
}

func literalTokens(toks []token) (string, bool) {
	if len(toks) == 0 {
		return "", false
	}
	var b strings.Builder
	for _, t := range toks {
		if t.kind != tokLit {
			return "", false
		}
		b.WriteRune(t.ch)
	}
	return b.String(), true
}

func writeTokens(b *strings.Builder, toks []token) {
	for _, t := range toks {
		switch t.kind {
		case tokLit:
			b.WriteString(regexp.QuoteMeta(string(t.ch)))
		case tokAny:
			b.WriteString(`[^/]`)
		case tokStar:
			b.WriteString(`[^/]*`)
		case tokRecPrefix:
			b.WriteString(`(?:/?|.*/)`)
		case tokRecSuffix:
			b.WriteString(`/.*`)
		case tokRecMiddle:
			b.WriteString(`(?:/|/.*/)`)
		case tokClass:
			b.WriteByte('[')
			if t.negated {
				b.WriteByte('^')
			}
			for _, r := range t.ranges {
				b.WriteString(classChar(r[0]))
				if r[1] != r[0] {
					b.WriteByte('-')
					b.WriteString(classChar(r[1]))
				}
			}
			b.WriteByte(']')
		case tokAlt:
			b.WriteString(`(?:`)
			for i, alt := range t.alts {
				if i > 0 {
					b.WriteByte('|')
				}
				writeTokens(b, alt)
			}
			b.WriteByte(')')
		}
	}
}

func classChar(r rune) string {
	switch r {
	case '\\', ']', '[', '^', '-':
		return `\` + string(r)
	}
	return regexp.QuoteMeta(string(r))
}

// parseGlob tokenizes a glob the way globset does, including its rules for
// when `**` is recursive: only as a whole path component.
func parseGlob(pattern string) ([]token, error) {
	rs := []rune(pattern)
	// stack[0] is the top-level token list; deeper entries are the
	// alternatives of an open {...} group. A pattern has at most one
	// top-level token per rune: sized so, the list is allocated once
	// (Odin compiles every read-deny pattern at start-up, and growing
	// the lists of 80-byte tokens was most of that).
	stack := [][]token{make([]token, 0, len(rs))}
	var alts [][]token
	inAlt := false
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		cur := &stack[len(stack)-1]
		switch c {
		case '?':
			*cur = append(*cur, token{kind: tokAny})
		case '*':
			if i+1 >= len(rs) || rs[i+1] != '*' {
				*cur = append(*cur, token{kind: tokStar})
				continue
			}
			i++ // consume the second '*'
			atStart := len(*cur) == 0
			next := rune(-1)
			if i+1 < len(rs) {
				next = rs[i+1]
			}
			if atStart {
				if next != -1 && next != '/' {
					*cur = append(*cur, token{kind: tokStar}, token{kind: tokStar})
				} else {
					*cur = append(*cur, token{kind: tokRecPrefix})
					if next == '/' {
						i++
					}
				}
				continue
			}
			prev := rs[i-2]
			if prev != '/' && (!inAlt || (prev != ',' && prev != '{')) {
				*cur = append(*cur, token{kind: tokStar}, token{kind: tokStar})
				continue
			}
			isSuffix := false
			switch {
			case next == -1:
				isSuffix = true
			case inAlt && (next == ',' || next == '}'):
				isSuffix = true
			case next == '/':
				i++
			default:
				*cur = append(*cur, token{kind: tokStar}, token{kind: tokStar})
				continue
			}
			// The preceding token (the '/' before "**") is folded into the
			// recursive token, as globset does.
			last := (*cur)[len(*cur)-1]
			*cur = (*cur)[:len(*cur)-1]
			switch {
			case last.kind == tokRecPrefix || last.kind == tokRecSuffix:
				*cur = append(*cur, last)
			case isSuffix:
				*cur = append(*cur, token{kind: tokRecSuffix})
			default:
				*cur = append(*cur, token{kind: tokRecMiddle})
			}
		case '[':
			t, n, err := parseClass(rs[i+1:])
			if err != nil {
				return nil, err
			}
			*cur = append(*cur, t)
			i += n
		case '{':
			if inAlt {
				return nil, errors.New("nested alternate groups are not allowed")
			}
			inAlt = true
			alts = nil
			stack = append(stack, nil)
		case ',':
			if !inAlt {
				*cur = append(*cur, token{kind: tokLit, ch: c})
				continue
			}
			alts = append(alts, *cur)
			stack[len(stack)-1] = nil
		case '}':
			if !inAlt {
				*cur = append(*cur, token{kind: tokLit, ch: c})
				continue
			}
			alts = append(alts, *cur)
			stack = stack[:len(stack)-1]
			stack[0] = append(stack[0], token{kind: tokAlt, alts: alts})
			inAlt = false
		case '\\':
			if i+1 >= len(rs) {
				return nil, errors.New("dangling '\\'")
			}
			i++
			*cur = append(*cur, token{kind: tokLit, ch: rs[i]})
		default:
			*cur = append(*cur, token{kind: tokLit, ch: c})
		}
	}
	if inAlt {
		return nil, errors.New("unclosed alternate group; missing '}'")
	}
	return stack[0], nil
}

// parseClass parses after '['; it returns the token and how many runes it
// consumed including the closing ']'.
func parseClass(rs []rune) (token, int, error) {
	t := token{kind: tokClass}
	i := 0
	if i < len(rs) && (rs[i] == '!' || rs[i] == '^') {
		t.negated = true
		i++
	}
	first, inRange := true, false
	for {
		if i >= len(rs) {
			return t, 0, errors.New("unclosed character class; missing ']'")
		}
		c := rs[i]
		i++
		switch {
		case c == ']' && !first:
			if inRange {
				t.ranges = append(t.ranges, [2]rune{'-', '-'})
			}
			return t, i, nil
		case c == '-' && !first:
			if inRange {
				if err := extendRange(&t, '-'); err != nil {
					return t, 0, err
				}
				inRange = false
			} else {
				inRange = true
			}
		default:
			if inRange {
				if err := extendRange(&t, c); err != nil {
					return t, 0, err
				}
			} else {
				t.ranges = append(t.ranges, [2]rune{c, c})
			}
			inRange = false
		}
		first = false
	}
}

func extendRange(t *token, hi rune) error {
	r := &t.ranges[len(t.ranges)-1]
	r[1] = hi
	if r[1] < r[0] {
		return fmt.Errorf("invalid range %c-%c", r[0], r[1])
	}
	return nil
}

// Match is the verdict of an ignore rule set on a path.
type Match int8

// Verdicts. A whitelist (a `!pattern` line) re-includes a path that a
// less specific rule ignored.
const (
	MatchNone Match = iota
	MatchIgnore
	MatchWhitelist
)

// String names the verdict.
func (m Match) String() string {
	switch m {
	case MatchIgnore:
		return "ignore"
	case MatchWhitelist:
		return "whitelist"
	}
	return "none"
}

type ignoreRule struct {
	glob      *Glob
	whitelist bool
	dirOnly   bool
}

// IgnoreFile is one parsed ignore file (or a list of --glob style
// patterns): its rules are matched against paths relative to Dir. It is
// immutable and safe for concurrent use.
type IgnoreFile struct {
	// Dir is the absolute directory patterns are relative to.
	Dir   string
	rules []ignoreRule
	// Errors lists the lines that could not be parsed; they are skipped,
	// as ripgrep skips them.
	Errors []error
}

// Len is the number of rules.
func (f *IgnoreFile) Len() int {
	if f == nil {
		return 0
	}
	return len(f.rules)
}

// Whitelists is the number of `!` rules.
func (f *IgnoreFile) Whitelists() int {
	n := 0
	if f != nil {
		for _, r := range f.rules {
			if r.whitelist {
				n++
			}
		}
	}
	return n
}

// ParseIgnore parses gitignore-formatted content whose patterns are
// relative to dir. Malformed lines are recorded in Errors and skipped.
func ParseIgnore(dir string, content []byte) *IgnoreFile {
	f := &IgnoreFile{Dir: dir}
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if err := f.AddLine(sc.Text()); err != nil {
			f.Errors = append(f.Errors, fmt.Errorf("line %d: %w", n, err))
		}
	}
	return f
}

// AddLine adds one gitignore line. Blank lines and comments are no-ops.
func (f *IgnoreFile) AddLine(line string) error {
	line = strings.TrimSuffix(line, "\r")
	if strings.HasPrefix(line, "#") {
		return nil
	}
	if !strings.HasSuffix(line, `\ `) {
		line = strings.TrimRight(line, " \t\r\n\v\f")
	}
	if line == "" {
		return nil
	}
	var rule ignoreRule
	anchored := false
	if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	} else {
		if strings.HasPrefix(line, "!") {
			rule.whitelist = true
			line = line[1:]
		}
		if strings.HasPrefix(line, "/") {
			line = line[1:]
			anchored = true
		}
	}
	if strings.HasSuffix(line, "/") {
		rule.dirOnly = true
		line = line[:len(line)-1]
	}
	actual := line
	if !anchored && !strings.Contains(line, "/") && !strings.HasPrefix(line, "**/") {
		actual = "**/" + actual
	}
	if strings.HasSuffix(actual, "/**") {
		actual += "/*"
	}
	g, err := CompileGlob(actual)
	if err != nil {
		return err
	}
	rule.glob = g
	f.rules = append(f.rules, rule)
	return nil
}

// Match returns the verdict of the last rule matching rel, a
// slash-separated path relative to f.Dir; isDir says whether it names a
// directory (directory-only rules match nothing else).
func (f *IgnoreFile) Match(rel string, isDir bool) Match {
	if f == nil {
		return MatchNone
	}
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := &f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		if r.glob.Match(rel) {
			if r.whitelist {
				return MatchWhitelist
			}
			return MatchIgnore
		}
	}
	return MatchNone
}

// Rules is the ignore state of one directory in a walk: the ignore files of
// the directory and of every ancestor, as ripgrep layers them. A Rules is
// immutable; Descend returns the state of a child directory, sharing its
// parent's. Safe for concurrent use.
type Rules struct {
	parent  *Rules
	dir     string
	custom  *IgnoreFile // .rgignore
	ignore  *IgnoreFile // .ignore
	git     *IgnoreFile // .gitignore
	exclude *IgnoreFile // .git/info/exclude
	global  *IgnoreFile // core.excludesFile, on the outermost level only
	hasGit  bool        // dir holds a .git entry
	anyGit  bool        // this level or an ancestor holds .git
	any     bool        // some level has at least one rule
}

// RulesOptions adjusts LoadRules.
type RulesOptions struct {
	// GlobalExcludes is the path of git's global excludes file. Empty means
	// git's default (core.excludesFile from the user's git config, else
	// $XDG_CONFIG_HOME/git/ignore); "-" disables it.
	GlobalExcludes string
	// NoParents ignores the ignore files of dir's ancestors.
	NoParents bool
}

// LoadRules returns the ignore state of dir (absolute, clean): the ignore
// files in dir and, unless opts.NoParents, in each of its ancestors, plus
// git's global excludes file. Unreadable ignore files are skipped, as
// ripgrep skips them.
func LoadRules(dir string, opts RulesOptions) *Rules {
	var chain []string
	if !opts.NoParents {
		for cur := filepath.Dir(dir); ; cur = filepath.Dir(cur) {
			chain = append(chain, cur)
			if filepath.Dir(cur) == cur {
				break
			}
		}
	}
	if dir == filepath.Dir(dir) && len(chain) > 0 {
		chain = nil // dir is the file system root
	}
	r := &Rules{}
	if g := loadGlobal(opts.GlobalExcludes); g != nil {
		r.global, r.any = g, true
	}
	for i := len(chain) - 1; i >= 0; i-- {
		r = r.descendFromDisk(chain[i])
	}
	return r.descendFromDisk(dir)
}

func (r *Rules) descendFromDisk(dir string) *Rules {
	has := func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	return r.Descend(dir, has)
}

// Descend returns the state of dir, a child of r's directory (or any
// descendant whose intermediate directories hold no ignore files). has
// reports whether dir contains an entry of the given name; a walker that
// has just listed dir answers it without further system calls. When dir
// holds no ignore files and no .git, Descend returns r itself.
func (r *Rules) Descend(dir string, has func(name string) bool) *Rules {
	hasGit := has(".git")
	hasGI, hasIG, hasRG := has(GitignoreName), has(IgnoreName), has(RgignoreName)
	if !hasGit && !hasGI && !hasIG && !hasRG {
		return r
	}
	n := &Rules{parent: r, dir: dir, hasGit: hasGit, any: r.any}
	n.anyGit = hasGit || r.anyGit
	load := func(path string) *IgnoreFile {
		data, err := os.ReadFile(path)
		if err != nil || len(data) == 0 {
			return nil
		}
		f := ParseIgnore(dir, data)
		if f.Len() == 0 {
			return nil
		}
		n.any = true
		return f
	}
	if hasRG {
		n.custom = load(filepath.Join(dir, RgignoreName))
	}
	if hasIG {
		n.ignore = load(filepath.Join(dir, IgnoreName))
	}
	if hasGI {
		n.git = load(filepath.Join(dir, GitignoreName))
	}
	if hasGit {
		n.exclude = load(filepath.Join(dir, ".git", "info", "exclude"))
	}
	return n
}

// InGitRepo reports whether the directory or an ancestor holds .git, which
// is what makes .gitignore files count.
func (r *Rules) InGitRepo() bool { return r != nil && r.anyGit }

// Match returns the verdict of the ignore files on path (absolute, clean,
// inside or below r's directory). Precedence, as in ripgrep: .rgignore over
// .ignore over .gitignore over .git/info/exclude over the global excludes;
// within each kind the deepest directory that has an opinion wins.
// .gitignore-kind files count only inside a git repository and never above
// the repository's root.
func (r *Rules) Match(path string, isDir bool) Match {
	if r == nil || !r.any {
		return MatchNone
	}
	var mCustom, mIgnore, mGit, mExclude Match
	anyGit, sawGit := r.anyGit, false
	var gitTop *Rules
	for l := r; l != nil; l = l.parent {
		if l.dir == "" {
			continue
		}
		rel, ok := relTo(l.dir, path)
		if !ok {
			continue
		}
		if mCustom == MatchNone {
			mCustom = l.custom.Match(rel, isDir)
		}
		if mIgnore == MatchNone {
			mIgnore = l.ignore.Match(rel, isDir)
		}
		if anyGit && !sawGit {
			if mGit == MatchNone {
				mGit = l.git.Match(rel, isDir)
			}
			if mExclude == MatchNone {
				mExclude = l.exclude.Match(rel, isDir)
			}
		}
		if l.hasGit && gitTop == nil {
			gitTop = l
		}
		sawGit = sawGit || l.hasGit
	}
	for _, m := range []Match{mCustom, mIgnore, mGit, mExclude} {
		if m != MatchNone {
			return m
		}
	}
	if anyGit {
		g := r.globalFile()
		if g != nil && gitTop != nil {
			if rel, ok := relTo(gitTop.dir, path); ok {
				return g.Match(rel, isDir)
			}
		}
	}
	return MatchNone
}

func (r *Rules) globalFile() *IgnoreFile {
	for l := r; l != nil; l = l.parent {
		if l.parent == nil {
			return l.global
		}
	}
	return nil
}

// relTo returns path relative to dir when path lies strictly below dir.
func relTo(dir, path string) (string, bool) {
	if dir == "/" {
		if len(path) > 1 && path[0] == '/' {
			return path[1:], true
		}
		return "", false
	}
	if len(path) > len(dir) && path[len(dir)] == '/' && path[:len(dir)] == dir {
		return path[len(dir)+1:], true
	}
	return "", false
}

// loadGlobal reads git's global excludes file.
func loadGlobal(path string) *IgnoreFile {
	if path == "-" {
		return nil
	}
	if path == "" {
		path = defaultGlobalExcludes()
	}
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	f := ParseIgnore("", data)
	if f.Len() == 0 {
		return nil
	}
	return f
}

// defaultGlobalExcludes finds core.excludesFile the way git does: the user's
// git config files, else $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore).
func defaultGlobalExcludes() string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var configs []string
	if xdg != "" {
		configs = append(configs, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"))
	}
	found := ""
	for _, c := range configs { // later files override earlier ones
		if v := excludesFromConfig(c); v != "" {
			found = v
		}
	}
	if found != "" {
		if strings.HasPrefix(found, "~/") && home != "" {
			found = filepath.Join(home, found[2:])
		}
		return found
	}
	if xdg == "" {
		return ""
	}
	p := filepath.Join(xdg, "git", "ignore")
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return p
}

// excludesFromConfig extracts core.excludesFile from a git config file; it
// understands the plain `[core]` / `excludesfile = path` form only.
func excludesFromConfig(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	inCore, val := false, ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			inCore = strings.EqualFold(strings.Trim(line, "[] \t"), "core")
			continue
		}
		if !inCore {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "excludesfile") {
			val = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return val
}

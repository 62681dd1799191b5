package search

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Matcher is a compiled search pattern: a Go regexp plus, when the pattern
// requires some literal text in every match, a literal prefilter that finds
// candidate lines with SIMD-backed byte searches so the regexp only runs on
// lines that could match. Immutable and safe for concurrent use; per-search
// state lives in a cursor.
type Matcher struct {
	re        *regexp.Regexp
	prog      *syntax.Prog // the same pattern for the line DFA (line mode)
	lits      []*literal   // any match contains one of these; nil: no prefilter
	exact     bool         // a verified literal hit is a matching line
	multiline bool
}

// MatchOptions adjusts Compile.
type MatchOptions struct {
	// IgnoreCase matches case-insensitively (rg -i), with Unicode simple
	// case folding.
	IgnoreCase bool
	// Multiline lets matches span lines (rg -U): `.` still stops at a
	// newline unless the pattern sets (?s); `^` and `$` match at line
	// boundaries.
	Multiline bool
}

// Compile compiles pattern with ripgrep's regex semantics as far as Go's
// RE2 engine allows: `\w`, `\d` and `\s` are Unicode-aware, as in Rust's
// regex crate (`\b` stays ASCII). Without Multiline a pattern that contains
// a literal newline is an error, as in ripgrep.
func Compile(pattern string, opts MatchOptions) (*Matcher, error) {
	translated := unicodeClasses(pattern)
	flags := syntax.Perl
	if opts.IgnoreCase {
		flags |= syntax.FoldCase
	}
	if opts.Multiline {
		flags &^= syntax.OneLine
	}
	tree, err := syntax.Parse(translated, flags)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPattern, err)
	}
	tree = tree.Simplify()
	if !opts.Multiline && hasNewline(tree) {
		return nil, fmt.Errorf("%w: the literal \"\\n\" is not allowed in a regex unless multiline is true", ErrPattern)
	}
	prefix := ""
	if opts.IgnoreCase {
		prefix += "(?i)"
	}
	if opts.Multiline {
		prefix += "(?m)"
	}
	re, err := regexp.Compile(prefix + translated)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPattern, err)
	}
	m := &Matcher{re: re, multiline: opts.Multiline}
	if !opts.Multiline {
		if m.prog, err = syntax.Compile(tree); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrPattern, err)
		}
	}
	if set, ok := required(tree); ok {
		m.lits = set
		m.exact = isExactLiterals(tree)
		for _, l := range set {
			if !l.verified {
				m.exact = false
			}
		}
	}
	return m, nil
}

// String returns the compiled regexp.
func (m *Matcher) String() string { return m.re.String() }

// hasNewline reports whether the pattern contains a literal newline.
func hasNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, s := range re.Sub {
		if hasNewline(s) {
			return true
		}
	}
	return false
}

// Rust's regex crate (and so ripgrep) makes \w, \d and \s Unicode-aware;
// Go's are ASCII-only. These are the Unicode equivalents.
const (
	uniWord  = `\p{L}\p{Nl}\p{M}\p{Nd}\p{Pc}`
	uniDigit = `\p{Nd}`
	uniSpace = `\t\n\v\f\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`
)

// unicodeClasses rewrites \w \d \s (and, outside brackets, \W \D \S) to
// Unicode classes. It tracks bracket expressions and \Q...\E so escapes
// keep their meaning.
func unicodeClasses(p string) string {
	if !strings.ContainsRune(p, '\\') {
		return p
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			n := p[i+1]
			if n == 'Q' {
				end := strings.Index(p[i+2:], `\E`)
				if end < 0 {
					b.WriteString(p[i:])
					return b.String()
				}
				b.WriteString(p[i : i+2+end+2])
				i += 2 + end + 1
				continue
			}
			var rep string
			switch n {
			case 'w':
				rep = uniWord
			case 'd':
				rep = uniDigit
			case 's':
				rep = uniSpace
			case 'W', 'D', 'S':
				if !inClass {
					rep = map[byte]string{'W': uniWord, 'D': uniDigit, 'S': uniSpace}[n]
					b.WriteString("[^" + rep + "]")
					i++
					continue
				}
			}
			if rep == "" {
				b.WriteByte(c)
				b.WriteByte(n)
				i++
				continue
			}
			if inClass {
				b.WriteString(rep)
			} else {
				b.WriteString("[" + rep + "]")
			}
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ']' right after '[' or '[^' is literal.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == '[' && inClass && i+1 < len(p) && p[i+1] == ':':
			end := strings.Index(p[i:], ":]")
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			b.WriteString(p[i : i+end+2])
			i += end + 1
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// literal is one needle of the prefilter.
type literal struct {
	s    []byte // the needle; for fold, ASCII letters lower-cased
	fold bool
	// For fold literals: the needle offset of the byte scanned for, and its
	// one or two case variants.
	at     int
	b1, b2 byte
	// verified: a hit proves the needle is present (false when Unicode
	// folding could match bytes the ASCII check does not see).
	verified bool
}

// maxAlternatives bounds the prefilter's literal set; past it a regexp
// scan of every line is cheaper than many literal scans.
const maxAlternatives = 8

// required returns a set of literals one of which occurs in every match of
// re, when such a set exists.
func required(re *syntax.Regexp) ([]*literal, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		l := newLiteral(re.Rune, re.Flags&syntax.FoldCase != 0)
		if l == nil {
			return nil, false
		}
		return []*literal{l}, true
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []*literal
		bestCost := math.Inf(1)
		for _, s := range re.Sub {
			set, ok := required(s)
			if !ok {
				continue
			}
			if c := setCost(set); c < bestCost {
				best, bestCost = set, c
			}
		}
		return best, best != nil
	case syntax.OpAlternate:
		var all []*literal
		for _, s := range re.Sub {
			set, ok := required(s)
			if !ok {
				return nil, false
			}
			all = append(all, set...)
		}
		if len(all) > maxAlternatives {
			return nil, false
		}
		return all, true
	}
	return nil, false
}

// isExactLiterals reports whether a line matches exactly when it contains
// one of the literals: the pattern is a literal or an alternation of them.
func isExactLiterals(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return true
	case syntax.OpCapture:
		return isExactLiterals(re.Sub[0])
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !isExactLiterals(s) {
				return false
			}
		}
		return true
	}
	return false
}

// setCost estimates how many candidates per million bytes a literal set
// yields; the prefilter uses the cheapest set a concatenation offers.
func setCost(set []*literal) float64 {
	c := 0.0
	for _, l := range set {
		c += l.cost()
	}
	return c
}

func (l *literal) cost() float64 {
	n := min(len(l.s), 8)
	if !l.fold {
		return byteFreq(rarest(l.s)) / math.Exp2(float64(n-1))
	}
	f := byteFreq(l.b1)
	if l.b2 != l.b1 {
		f += byteFreq(l.b2)
	}
	return f / math.Exp2(float64(n-1)/2)
}

func newLiteral(runes []rune, fold bool) *literal {
	var buf []byte
	for _, r := range runes {
		buf = utf8.AppendRune(buf, r)
	}
	if !fold || !anyFoldable(runes) {
		return &literal{s: buf, verified: true}
	}
	// Case-insensitive: scan for one ASCII byte whose case variants are
	// exactly its ASCII upper and lower forms (k and s also fold to
	// non-ASCII runes), preferring bytes with no case at all.
	l := &literal{fold: true, verified: true, at: -1}
	best := math.Inf(1)
	off := 0
	for _, r := range runes {
		if r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S' {
			if unicode.SimpleFold(r) != r {
				l.verified = false
			}
			off += utf8.RuneLen(r)
			continue
		}
		b := byte(r)
		lo, up := lowerASCII(b), upperASCII(b)
		cost := byteFreq(lo)
		if lo != up {
			cost += byteFreq(up)
		}
		if cost < best {
			best, l.at, l.b1, l.b2 = cost, off, lo, up
		}
		off++
	}
	if l.at < 0 {
		return nil
	}
	for i, c := range buf {
		buf[i] = lowerASCII(c)
	}
	l.s = buf
	return l
}

func anyFoldable(runes []rune) bool {
	for _, r := range runes {
		if unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func upperASCII(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - ('a' - 'A')
	}
	return b
}

// rarest returns the byte of s least frequent in typical source code.
func rarest(s []byte) byte {
	best := s[0]
	for _, c := range s[1:] {
		if byteRanks[c] < byteRanks[best] {
			best = c
		}
	}
	return best
}

// byteRanks holds, for each byte, 16*log2(1+occurrences per million) in
// the Go source tree: a stand-in for how common the byte is in code.
const byteRanks = "\x00\x01\x01\x01\x01\x01\x02\x02\x00\xf2\xee\x01\x00\x21\x03\x00\x01\x03\x03\x02\x00\x02\x13\x02\x01\x00\x00\x02\x02\x01\x01\x01\xff\xa4\xd2\x84\x92\x9b\xa3\x9f\xd8\xd8\xae\xa6\xe8\xb5\xdc\xd9\xf1\xdc\xd6\xcf\xd0\xc5\xce\xc2\xca\xc3\xd4\xa6\xa1\xd1\x9e\x67\x62\xd7\xbe\xc7\xc4\xcb\xbe\xb0\xad\xc7\x8f\xa0\xbf\xc2\xbd\xc6\xc4\xa4\xca\xcf\xcc\xb3\xbe\xa7\xbe\xa5\x96\xb5\xc5\xb5\x6f\xcd\x8c\xed\xd0\xe2\xdf\xf9\xe0\xd5\xd2\xec\x99\xc0\xe2\xd6\xef\xea\xda\x9b\xf0\xeb\xf5\xde\xca\xbf\xe5\xcb\xa4\xca\xa5\xca\x59\x01\x4d\x3d\x4c\x44\x33\x40\x39\x27\x45\x36\x37\x24\x2d\x1c\x27\x25\x2c\x25\x26\x2e\x38\x3a\x22\x39\x3d\x38\x19\x1c\x37\x3b\x2a\x1e\x22\x27\x22\x26\x35\x33\x2d\x2e\x25\x37\x2c\x2f\x33\x2e\x27\x21\x22\x35\x33\x31\x27\x28\x22\x78\x28\x42\x34\x2b\x3c\x2f\x35\x21\x00\x01\x7a\x35\x0f\x0c\x02\x19\x09\x21\x20\x10\x31\x1f\x4a\x2d\x1b\x15\x01\x07\x06\x1b\x1c\x25\x47\x4a\x13\x14\x06\x00\x01\x05\x2e\x40\x65\x48\x28\x35\x3c\x2e\x2b\x1b\x19\x07\x0d\x07\x01\x12\x2f\x01\x02\x04\x02\x01\x02\x00\x02\x00\x00\x00\x01\x03\x02\x02"

// byteFreq estimates how often b occurs (per million bytes of source).
func byteFreq(b byte) float64 { return math.Exp2(float64(byteRanks[b])/16) - 1 }

// cursor scans one buffer for prefilter candidates, caching the next hit
// of every stream so alternations and two-case scans stay linear.
type cursor struct {
	lits []*literal
	next [][2]int // per literal: next hit of each variant stream; -2 unknown
}

func newCursor(lits []*literal) *cursor {
	return &cursor{lits: lits, next: make([][2]int, len(lits))}
}

func (c *cursor) reset() {
	for i := range c.next {
		c.next[i] = [2]int{-2, -2}
	}
}

// find returns an offset at or after from that lies inside a candidate
// line (a verified hit of a literal), or -1.
func (c *cursor) find(data []byte, from int) int {
	for {
		best, bestLit := -1, -1
		for i, l := range c.lits {
			for v := 0; v < 2; v++ {
				if v == 1 && (!l.fold || l.b1 == l.b2) {
					continue
				}
				p := c.next[i][v]
				if p != -1 && p < from {
					p = c.scan(l, v, data, from)
					c.next[i][v] = p
				}
				if p >= 0 && (best < 0 || p < best) {
					best, bestLit = p, i
				}
			}
		}
		if best < 0 {
			return -1
		}
		l := c.lits[bestLit]
		if !l.fold {
			return best
		}
		start := best - l.at
		if start >= 0 && start+len(l.s) <= len(data) && (!l.verified || equalFoldASCII(data[start:start+len(l.s)], l.s)) {
			return best
		}
		from = best + 1
	}
}

func (c *cursor) scan(l *literal, v int, data []byte, from int) int {
	if from >= len(data) {
		return -1
	}
	var i int
	switch {
	case !l.fold:
		i = bytes.Index(data[from:], l.s)
	case v == 0:
		i = bytes.IndexByte(data[from:], l.b1)
	default:
		i = bytes.IndexByte(data[from:], l.b2)
	}
	if i < 0 {
		return -1
	}
	return from + i
}

// equalFoldASCII compares hay with needle (whose letters are lower case),
// ignoring ASCII case.
func equalFoldASCII(hay, needle []byte) bool {
	for i, c := range hay {
		if lowerASCII(c) != needle[i] {
			return false
		}
	}
	return true
}

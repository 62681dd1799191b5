package search

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"slices"
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
	// streams are the byte strings scanned for, case-sensitively: the
	// needle itself, or for a case-insensitive needle every case variant
	// of a short window of it starting at offset at.
	streams [][]byte
	at      int
	// pair: instead of streams, scan with indexFoldPair for the two bytes
	// at offset at (pc lower case, pm the case bits to ignore).
	pair     bool
	pc0, pc1 byte
	pm0, pm1 byte
	// verified: a hit proves the needle is present (false when Unicode
	// folding could match bytes the ASCII check does not see).
	verified bool
	// cost estimates the scan work (see literalPassCost).
	cost float64
}

// literalPassCost is the cost of one SIMD scan of the buffer, in units of
// candidate hits per million bytes: a pass costs about as much as handling
// a few thousand candidates.
const literalPassCost = 3000

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

// setCost estimates the work of scanning for a literal set; the
// prefilter uses the cheapest set a concatenation offers.
func setCost(set []*literal) float64 {
	c := 0.0
	for _, l := range set {
		c += l.cost
	}
	return c
}

func newLiteral(runes []rune, fold bool) *literal {
	var buf []byte
	for _, r := range runes {
		buf = utf8.AppendRune(buf, r)
	}
	if !fold || !anyFoldable(runes) {
		n := min(len(buf), 8)
		hits := byteFreq(rarest(buf)) / math.Exp2(float64(n-1))
		return &literal{s: buf, streams: [][]byte{buf}, verified: true, cost: literalPassCost + hits}
	}
	// Case-insensitive: scan for every case variant of a window of up to 3
	// bytes whose case variants are exactly ASCII upper and lower forms
	// (k and s also fold to non-ASCII runes), trading the number of scans
	// against how often the window occurs.
	l := &literal{fold: true, verified: true, at: -1, cost: math.Inf(1)}
	var safe []bool // per byte of buf: ASCII and folding only within ASCII
	for _, r := range runes {
		ok := r < utf8.RuneSelf && r != 'k' && r != 'K' && r != 's' && r != 'S'
		if !ok && unicode.SimpleFold(r) != r {
			l.verified = false
		}
		for range utf8.RuneLen(r) {
			safe = append(safe, ok)
		}
	}
	for i, c := range buf {
		buf[i] = lowerASCII(c)
	}
	l.s = buf
	// Windows never include whitespace: it pairs with everything, so
	// byte frequencies say nothing about how rare a window holding it is.
	// For the same reason the estimate of a window's hits is conservative:
	// its rarest byte's frequency, divided by 5 per extra byte.
	bestLen := 0
	for i := range buf {
		hits, variants := math.Inf(1), 1.0
		for n := 1; n <= 3 && i+n <= len(buf) && safe[i+n-1] && !isSpaceByte(buf[i+n-1]); n++ {
			b := buf[i+n-1]
			f := byteFreq(b)
			if up := upperASCII(b); up != b {
				f += byteFreq(up)
				variants *= 2
			}
			hits = min(hits, f)
			if cost := variants*literalPassCost + hits/math.Pow(5, float64(n-1)); cost < l.cost {
				l.cost, l.at, bestLen = cost, i, n
			}
		}
	}
	if l.at < 0 { // only whitespace is safe: scan for it all the same
		for i := range buf {
			if safe[i] {
				l.at, bestLen, l.cost = i, 1, literalPassCost+byteFreq(buf[i])
				break
			}
		}
	}
	if l.at < 0 {
		return nil
	}
	l.streams = caseVariants(buf[l.at : l.at+bestLen])
	// One word-at-a-time pass for a rare pair of bytes, case folded, often
	// beats several exact scans.
	for i := 0; i+1 < len(buf); i++ {
		if !safe[i] || !safe[i+1] || isSpaceByte(buf[i]) || isSpaceByte(buf[i+1]) {
			continue
		}
		hits := min(foldFreq(buf[i]), foldFreq(buf[i+1])) / 5
		if cost := swarPassCost + hits; cost < l.cost {
			l.cost, l.at, l.pair = cost, i, true
			l.pc0, l.pm0 = foldMask(buf[i])
			l.pc1, l.pm1 = foldMask(buf[i+1])
		}
	}
	if l.pair {
		l.streams = [][]byte{nil}
	}
	return l
}

// swarPassCost is the cost of an indexFoldPair pass in the units of
// literalPassCost: slower per byte than a SIMD scan, but one pass.
const swarPassCost = 2 * literalPassCost

func foldFreq(b byte) float64 {
	f := byteFreq(b)
	if up := upperASCII(b); up != b {
		f += byteFreq(up)
	}
	return f
}

// foldMask returns the byte to compare with after OR-ing the mask: letters
// ignore the 0x20 case bit, other bytes compare exactly.
func foldMask(b byte) (c, mask byte) {
	if 'a' <= b && b <= 'z' {
		return b, 0x20
	}
	return b, 0
}

// indexFoldPair returns the first i with s[i]|m0 == c0 and s[i+1]|m1 == c1,
// or -1, testing eight positions per step with word arithmetic (SWAR):
// Go has no SIMD search for a byte pair in either case.
func indexFoldPair(s []byte, c0, m0, c1, m1 byte) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	b0, b1 := lo*uint64(c0), lo*uint64(c1)
	k0, k1 := lo*uint64(m0), lo*uint64(m1)
	rest := s
	for len(rest) >= 17 {
		// Two words per step, written so the compiler drops bounds checks.
		w0 := binary.LittleEndian.Uint64(rest[0:8])
		w1 := binary.LittleEndian.Uint64(rest[1:9])
		w2 := binary.LittleEndian.Uint64(rest[8:16])
		w3 := binary.LittleEndian.Uint64(rest[9:17])
		za := ((w0 | k0) ^ b0) | ((w1 | k1) ^ b1) // zero byte: both match
		zb := ((w2 | k0) ^ b0) | ((w3 | k1) ^ b1)
		// The lowest byte flagged by the classic zero-byte test is always
		// a true zero (false flags only sit above a true zero).
		ta := (za - lo) &^ za & hi
		tb := (zb - lo) &^ zb & hi
		if ta|tb != 0 {
			off := len(s) - len(rest)
			if ta != 0 {
				return off + bits.TrailingZeros64(ta)/8
			}
			return off + 8 + bits.TrailingZeros64(tb)/8
		}
		rest = rest[16:]
	}
	for i := len(s) - len(rest); i+1 < len(s); i++ {
		if s[i]|m0 == c0 && s[i+1]|m1 == c1 {
			return i
		}
	}
	return -1
}

func isSpaceByte(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\v' || b == '\f' }

// caseVariants returns every ASCII case spelling of w (lower case).
func caseVariants(w []byte) [][]byte {
	out := [][]byte{nil}
	for _, c := range w {
		up := upperASCII(c)
		var next [][]byte
		for _, v := range out {
			next = append(next, append(slices.Clone(v), c))
			if up != c {
				next = append(next, append(slices.Clone(v), up))
			}
		}
		out = next
	}
	return out
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
// of every stream so alternations and case variants stay linear.
type cursor struct {
	lits []*literal
	next [][]int // per literal, per stream: next hit; -2 unknown, -1 none
}

func newCursor(lits []*literal) *cursor {
	c := &cursor{lits: lits, next: make([][]int, len(lits))}
	for i, l := range lits {
		c.next[i] = make([]int, len(l.streams))
	}
	return c
}

func (c *cursor) reset() {
	for _, n := range c.next {
		for j := range n {
			n[j] = -2
		}
	}
}

// find returns an offset at or after from that lies inside a candidate
// line (a verified hit of a literal), or -1.
func (c *cursor) find(data []byte, from int) int {
	for {
		best := -1
		for i, l := range c.lits {
			next := c.next[i]
			for v, needle := range l.streams {
				p := next[v]
				if p != -1 && p < from {
					p = -1
					if from < len(data) {
						var j int
						if l.pair {
							j = indexFoldPair(data[from:], l.pc0, l.pm0, l.pc1, l.pm1)
						} else if len(needle) == 1 {
							j = bytes.IndexByte(data[from:], needle[0])
						} else {
							j = bytes.Index(data[from:], needle)
						}
						if j >= 0 {
							p = from + j
						}
					}
					next[v] = p
				}
				if p >= 0 && (best < 0 || p < best) {
					best = p
				}
			}
		}
		if best < 0 {
			return -1
		}
		// Several literals can hit at the same offset (a|A 0 folded both
		// scan for "0"): the candidate stands if any of them verifies.
		for i, l := range c.lits {
			if c.verifies(l, c.next[i], data, best) {
				return best
			}
		}
		from = best + 1
	}
}

// verifies reports whether literal l, whose streams' next hits are next,
// hits at best and matches there.
func (c *cursor) verifies(l *literal, next []int, data []byte, best int) bool {
	if !slices.Contains(next, best) {
		return false
	}
	if !l.fold {
		return true
	}
	start := best - l.at
	return start >= 0 && start+len(l.s) <= len(data) && (!l.verified || equalFoldASCII(data[start:start+len(l.s)], l.s))
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

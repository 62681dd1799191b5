package search

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// lineDFA answers "does this line contain a match?" with a lazily built
// DFA over the compiled RE2 program, one byte per step. Go's regexp
// answers it with a backtracker that costs tens of nanoseconds per byte;
// ripgrep's speed on patterns without literals comes from a DFA like this
// one. States are built on demand and cached, so the DFA is per worker
// (not safe for concurrent use) and bounded in size.
//
// Empty-width assertions are resolved when the next character is known,
// as RE2 does: a state keeps the threads waiting on an assertion, and a
// transition first follows the assertions that hold between the previous
// character and the next, then steps over the character.
type lineDFA struct {
	prog    *syntax.Prog
	hasWord bool // the program tests \b or \B: states remember the previous char's class
	start   *dstate
	match   *dstate // sentinel transition target: the line matches
	always  bool    // the pattern matches the empty string unconditionally
	states  map[string]*dstate
	// scratch for computing transitions
	stack []uint32
	seen  []uint32 // generation marks per pc
	gen   uint32
	list  []uint32
}

type dstate struct {
	pcs       []uint32 // threads, closed over Alt/Nop/Capture but not assertions
	prevWord  bool
	lineStart bool
	next      [utf8.RuneSelf]*dstate // ASCII transitions; matchState means a match
	rnext     map[rune]*dstate
	eol       int8 // 0 unknown, 1 a match ends the line, -1 not
}

// maxDFAStates bounds the cache; past it, the cache is dropped and rebuilt.
const maxDFAStates = 4096

func newLineDFA(prog *syntax.Prog) *lineDFA {
	d := &lineDFA{prog: prog, seen: make([]uint32, len(prog.Inst)), match: &dstate{}}
	for _, in := range prog.Inst {
		if in.Op == syntax.InstEmptyWidth && syntax.EmptyOp(in.Arg)&(syntax.EmptyWordBoundary|syntax.EmptyNoWordBoundary) != 0 {
			d.hasWord = true
		}
	}
	d.reset()
	return d
}

func (d *lineDFA) reset() {
	d.states = map[string]*dstate{}
	d.list = d.list[:0]
	d.gen++
	d.always = d.addThread(uint32(d.prog.Start), 0, false)
	pcs := slices.Clone(d.list)
	slices.Sort(pcs)
	d.start = d.intern(pcs, false, true)
}

func (d *lineDFA) intern(pcs []uint32, prevWord, lineStart bool) *dstate {
	key := make([]byte, 0, len(pcs)*4+1)
	var flags byte
	if prevWord {
		flags |= 1
	}
	if lineStart {
		flags |= 2
	}
	key = append(key, flags)
	for _, pc := range pcs {
		key = append(key, byte(pc), byte(pc>>8), byte(pc>>16), byte(pc>>24))
	}
	if s, ok := d.states[string(key)]; ok {
		return s
	}
	s := &dstate{pcs: pcs, prevWord: prevWord, lineStart: lineStart}
	d.states[string(key)] = s
	return s
}

// addThread adds pc and what it reaches through Alt, Nop and Capture (and,
// when flags is non-zero, through assertions that flags satisfy) to
// d.list. It reports whether a Match was reached.
func (d *lineDFA) addThread(pc uint32, flags syntax.EmptyOp, resolve bool) bool {
	matched := false
	d.stack = append(d.stack[:0], pc)
	for len(d.stack) > 0 {
		pc := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if d.seen[pc] == d.gen {
			continue
		}
		d.seen[pc] = d.gen
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			d.stack = append(d.stack, in.Arg, in.Out)
		case syntax.InstNop, syntax.InstCapture:
			d.stack = append(d.stack, in.Out)
		case syntax.InstEmptyWidth:
			if !resolve {
				d.list = append(d.list, pc)
			} else if syntax.EmptyOp(in.Arg)&^flags == 0 {
				d.stack = append(d.stack, in.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstFail:
		default: // rune instructions wait for the next character
			d.list = append(d.list, pc)
		}
	}
	return matched
}

func isWordByte(r rune) bool {
	return r < utf8.RuneSelf && syntax.IsWordChar(r)
}

// flagsBefore returns the assertions that hold between s's previous
// character and next (-1 for the end of the line).
func (d *lineDFA) flagsBefore(s *dstate, next rune) syntax.EmptyOp {
	var f syntax.EmptyOp
	if s.lineStart {
		f |= syntax.EmptyBeginLine | syntax.EmptyBeginText
	}
	if next < 0 {
		f |= syntax.EmptyEndLine | syntax.EmptyEndText
	}
	if s.prevWord != (next >= 0 && isWordByte(next)) {
		f |= syntax.EmptyWordBoundary
	} else {
		f |= syntax.EmptyNoWordBoundary
	}
	return f
}

// resolve follows s's pending assertions given the next character,
// leaving the rune threads in d.list; it reports a Match.
func (d *lineDFA) resolve(s *dstate, next rune) bool {
	flags := d.flagsBefore(s, next)
	d.list = d.list[:0]
	d.gen++
	matched := false
	for _, pc := range s.pcs {
		if d.addThread(pc, flags, true) {
			matched = true
		}
	}
	return matched
}

// step computes s's transition on r.
func (d *lineDFA) step(s *dstate, r rune) *dstate {
	if d.resolve(s, r) {
		return d.match
	}
	var outs []uint32
	for _, pc := range d.list {
		in := &d.prog.Inst[pc]
		if in.Op != syntax.InstEmptyWidth && in.MatchRune(r) {
			outs = append(outs, in.Out)
		}
	}
	// Unanchored search: a match may also start after r.
	outs = append(outs, uint32(d.prog.Start))
	d.list = d.list[:0]
	d.gen++
	for _, pc := range outs {
		if d.addThread(pc, 0, false) {
			return d.match
		}
	}
	pcs := slices.Clone(d.list)
	slices.Sort(pcs)
	prevWord := d.hasWord && isWordByte(r)
	if len(d.states) >= maxDFAStates {
		d.reset()
	}
	ns := d.intern(pcs, prevWord, false)
	if r < utf8.RuneSelf {
		s.next[r] = ns
	} else {
		if s.rnext == nil {
			s.rnext = map[rune]*dstate{}
		}
		s.rnext[r] = ns
	}
	return ns
}

// matchesAtEOL reports whether a match ends at the end of the line.
func (d *lineDFA) matchesAtEOL(s *dstate) bool {
	if s.eol == 0 {
		s.eol = -1
		if d.resolve(s, -1) {
			s.eol = 1
		}
	}
	return s.eol == 1
}

// lineMatches reports whether line (without its terminator) matches.
func (d *lineDFA) lineMatches(line []byte) bool {
	if d.always {
		return true
	}
	s := d.start
	for i := 0; i < len(line); {
		c := line[i]
		var ns *dstate
		if c < utf8.RuneSelf {
			ns = s.next[c]
			if ns == nil {
				ns = d.step(s, rune(c))
			}
			i++
		} else {
			r, size := utf8.DecodeRune(line[i:])
			ns = s.rnext[r]
			if ns == nil {
				ns = d.step(s, r)
			}
			i += size
		}
		if ns == d.match {
			return true
		}
		s = ns
	}
	return d.matchesAtEOL(s)
}

// nextMatch returns the bounds of the first matching line at or after
// from (which must be a line start), or ok false.
func (d *lineDFA) nextMatch(data []byte, from int) (ls, le int, ok bool) {
	if d.always {
		if from >= len(data) {
			return 0, 0, false
		}
		return from, lineEnd(data, from), true
	}
	s := d.start
	ls = from
	for i := from; i < len(data); {
		c := data[i]
		var ns *dstate
		switch {
		case c == '\n':
			if d.matchesAtEOL(s) {
				return ls, i, true
			}
			s, ls = d.start, i+1
			i++
			continue
		case c < utf8.RuneSelf:
			ns = s.next[c]
			if ns == nil {
				ns = d.step(s, rune(c))
			}
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			ns = s.rnext[r]
			if ns == nil {
				ns = d.step(s, r)
			}
			i += size
		}
		if ns == d.match {
			le := bytes.IndexByte(data[i:], '\n')
			if le < 0 {
				return ls, len(data), true
			}
			return ls, i + le, true
		}
		s = ns
	}
	if ls < len(data) && d.matchesAtEOL(s) {
		return ls, len(data), true
	}
	return 0, 0, false
}

package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18
	sub = 0x1a

	c1DCS = 0x90
	c1SOS = 0x98
	c1CSI = 0x9b
	c1ST  = 0x9c
	c1OSC = 0x9d
	c1PM  = 0x9e
	c1APC = 0x9f
)

// Text returns s without any terminal control: newlines and tabs stay, a
// CR LF becomes LF and a bare CR (which would overwrite the line) becomes
// LF; every other C0 control, DEL and C1 control is dropped; ESC and C1
// sequences are dropped with their parameters and, when terminated, their
// payload (an unterminated string keeps its text, minus the introducer, so
// nothing readable is lost); bidi controls become a visible <U+XXXX>;
// invalid UTF-8 bytes become U+FFFD.
func Text(s string) string {
	return sanitize(s, false)
}

// Styled is Text for text already styled by Odin: well-formed SGR
// sequences (ESC [ digits, ';' or ':' m — colours and attributes, which
// cannot move the cursor, talk to the terminal or leave the line) are
// kept, everything else is removed as by Text. It is the last guard where
// a front end writes lines it has styled itself; untrusted parts go
// through Text first, before Odin styles them, so that a model's own
// colours never survive.
func Styled(s string) string {
	return sanitize(s, true)
}

func sanitize(s string, keepSGR bool) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := decode(s, i)
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			if i+1 >= len(s) || s[i+1] != '\n' {
				b.WriteByte('\n')
			}
		case r == esc:
			if keepSGR {
				if n := sgrLen(s[i:]); n > 0 {
					b.WriteString(s[i : i+n])
					i += n
					continue
				}
			}
			i = skipEscape(s, i+size)
			continue
		case r >= 0x80 && r <= 0x9f:
			i = skipC1(s, r, i+size)
			continue
		case r < 0x20 || r == 0x7f:
			// other C0 controls and DEL: dropped
		case isBidi(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Line is Text for a one-line context (a file name, a label, a status
// line): newlines, carriage returns and tabs become spaces as well.
func Line(s string) string {
	t := Text(s)
	if !strings.ContainsAny(t, "\n\t") {
		return t
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, t)
}

// sgrLen is the length of the SGR sequence s starts with, 0 if none.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != esc || s[1] != '[' {
		return 0
	}
	for k := 2; k < len(s); k++ {
		switch c := s[k]; {
		case c >= '0' && c <= '9', c == ';', c == ':':
		case c == 'm':
			return k + 1
		default:
			return 0
		}
	}
	return 0
}

// clean reports whether s holds nothing Text would change, so the common
// case costs one scan and no allocation.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (r >= 0x80 && r <= 0x9f) || isBidi(r) {
			return false
		}
		i += size
	}
	return true
}

// decode returns the rune at i; an invalid byte in 0x80–0x9f is returned
// as the C1 control it is in 8-bit terminal encodings.
func decode(s string, i int) (rune, int) {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 && s[i] >= 0x80 && s[i] <= 0x9f {
		return rune(s[i]), 1
	}
	return r, size
}

// isBidi reports the embedding, override and isolate controls.
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// skipEscape returns the index after the escape sequence whose ESC ended
// just before j.
func skipEscape(s string, j int) int {
	if j >= len(s) {
		return j
	}
	switch c := s[j]; {
	case c == '[':
		return skipCSI(s, j+1)
	case c == ']', c == 'P', c == 'X', c == '^', c == '_':
		return skipString(s, j+1)
	case c >= 0x20 && c <= 0x2f: // nF: intermediates then a final byte
		k := j
		for k < len(s) && s[k] >= 0x20 && s[k] <= 0x2f {
			k++
		}
		if k < len(s) && s[k] >= 0x30 && s[k] <= 0x7e {
			k++
		}
		return k
	case c >= 0x30 && c <= 0x7e: // Fp, Fe, Fs: ESC 7, ESC c, ESC M...
		return j + 1
	}
	return j // a lone ESC: the next character stands on its own
}

// skipC1 returns the index after the sequence a C1 control r, ending just
// before j, introduces; other C1 controls stand alone.
func skipC1(s string, r rune, j int) int {
	switch r {
	case c1CSI:
		return skipCSI(s, j)
	case c1OSC, c1DCS, c1SOS, c1PM, c1APC:
		return skipString(s, j)
	}
	return j
}

// skipCSI skips parameter and intermediate bytes and the final byte. A
// byte that cannot belong to a CSI ends it there, to be read on its own.
func skipCSI(s string, k int) int {
	for k < len(s) {
		c := s[k]
		switch {
		case c >= 0x20 && c <= 0x3f:
			k++
		case c >= 0x40 && c <= 0x7e:
			return k + 1
		default:
			return k
		}
	}
	return k
}

// skipString skips a control string (OSC, DCS, SOS, PM, APC) and its
// terminator: BEL, ST (ESC \ or C1 ST), or CAN/SUB which cancel it. Another
// ESC also ends it, and starts a sequence of its own. Unterminated, only
// the introducer is dropped: its payload is left as plain text.
func skipString(s string, k int) int {
	for i := k; i < len(s); {
		r, size := decode(s, i)
		switch r {
		case bel, can, sub, c1ST:
			return i + size
		case esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i
		}
		i += size
	}
	return k
}

// JSON returns the encoded JSON document b with the characters
// encoding/json leaves raw but a terminal would act on — DEL, the C1
// controls (U+009B is CSI) and the bidi controls — written as \uXXXX
// escapes. The document decodes to exactly the same value: JSON output
// stays lossless data and is still safe to print. b must be valid UTF-8, as
// encoding/json writes it.
func JSON(b []byte) []byte {
	if jsonClean(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) || isBidi(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

func jsonClean(b []byte) bool {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			if b[i] == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r >= 0x80 && r <= 0x9f) || isBidi(r) {
			return false
		}
		i += size
	}
	return true
}

// Partial is Line for the incomplete tail of a stream, shown until the rest
// arrives: an escape sequence that has begun but not ended is withheld from
// its introducer on, instead of being shown as text (its payload would
// flash on screen until the terminator came).
func Partial(s string) string {
	return Line(s[:pendingStart(s)])
}

// pendingStart is where an unfinished sequence begins in s, len(s) if none.
func pendingStart(s string) int {
	for i := 0; i < len(s); {
		r, size := decode(s, i)
		var next int
		switch {
		case r == esc:
			j := i + size
			if j >= len(s) {
				return i
			}
			next = skipEscape(s, j)
			switch c := s[j]; {
			case c == '[':
				if csiPending(s, j+1) {
					return i
				}
			case c == ']', c == 'P', c == 'X', c == '^', c == '_':
				if stringPending(s, j+1) {
					return i
				}
			case c >= 0x20 && c <= 0x2f:
				if next >= len(s) && (s[next-1] < 0x30 || s[next-1] > 0x7e) {
					return i
				}
			}
		case r == c1CSI:
			if csiPending(s, i+size) {
				return i
			}
			next = skipC1(s, r, i+size)
		case r == c1OSC || r == c1DCS || r == c1SOS || r == c1PM || r == c1APC:
			if stringPending(s, i+size) {
				return i
			}
			next = skipC1(s, r, i+size)
		default:
			next = i + size
		}
		i = next
	}
	return len(s)
}

// csiPending reports a CSI whose parameters run to the end of s.
func csiPending(s string, k int) bool {
	return skipCSI(s, k) == len(s) && (k >= len(s) || s[len(s)-1] < 0x40 || s[len(s)-1] > 0x7e)
}

// stringPending reports a control string with no terminator in s, or
// ended by an ESC that is the last byte (the first half of an ST).
func stringPending(s string, k int) bool {
	end := skipString(s, k)
	return (end == k && (k >= len(s) || s[k] != esc)) || (end == len(s)-1 && s[end] == esc)
}

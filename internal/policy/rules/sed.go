package rules

import "fmt"

// sedCommand says how the parser reads one sed command letter and whether
// it only reads: what follows it (nothing, a count, a label, text, a
// delimited s or y body) or the reason it is refused.
type sedCommand struct {
	args    sedArgs
	refused string
}

type sedArgs int

const (
	sedNone   sedArgs = iota
	sedCount          // q, Q, l, L take an optional number
	sedLabel          // :, b, t, T, v take a label up to ; or newline
	sedText           // a, i, c take text to the end of the line
	sedSubst          // s/re/replacement/flags
	sedTrans          // y/src/dst/
	sedBlock          // { opens a block
	sedRefuse         // writes, reads another file or executes
)

// sedCommands lists every sed command the parser accepts or refuses by
// name; any other letter is refused as unknown.
var sedCommands = func() map[byte]sedCommand {
	m := map[byte]sedCommand{
		'{': {args: sedBlock}, 's': {args: sedSubst}, 'y': {args: sedTrans},
		'w': {args: sedRefuse, refused: "sed w/W writes a file"},
		'W': {args: sedRefuse, refused: "sed w/W writes a file"},
		'r': {args: sedRefuse, refused: "sed r/R reads another file"},
		'R': {args: sedRefuse, refused: "sed r/R reads another file"},
		'e': {args: sedRefuse, refused: "sed e executes a command"},
	}
	for _, c := range "=dDgGhHnNpPxzF" {
		m[byte(c)] = sedCommand{args: sedNone}
	}
	for _, c := range "qQlL" {
		m[byte(c)] = sedCommand{args: sedCount}
	}
	for _, c := range ":btTv" {
		m[byte(c)] = sedCommand{args: sedLabel}
	}
	for _, c := range "aic" {
		m[byte(c)] = sedCommand{args: sedText}
	}
	return m
}()

// sedScriptReadOnly parses a sed script conservatively and reports whether
// it only reads: no w/W (write a file), r/R (read another file), e (execute)
// commands and no s///w or s///e flags. Anything it does not understand
// counts as not read-only, with the reason.
func sedScriptReadOnly(s string) (bool, string) {
	p := &sedParser{s: s}
	for p.i < len(s) {
		p.skip(" \t\n;}")
		if p.done() {
			break
		}
		if p.peek() == '#' {
			p.toEOL()
			continue
		}
		if why := p.addresses(); why != "" {
			return false, why
		}
		if why := p.command(); why != "" {
			return false, why
		}
	}
	return true, ""
}

// sedParser walks a sed script; i is the next byte to read.
type sedParser struct {
	s string
	i int
}

func (p *sedParser) done() bool { return p.i >= len(p.s) }
func (p *sedParser) peek() byte { return p.s[p.i] }

// skip advances past any of the bytes in set.
func (p *sedParser) skip(set string) {
	for !p.done() && containsByte(set, p.peek()) {
		p.i++
	}
}

func containsByte(set string, c byte) bool {
	for i := 0; i < len(set); i++ {
		if set[i] == c {
			return true
		}
	}
	return false
}

func (p *sedParser) digits() {
	for !p.done() && p.peek() >= '0' && p.peek() <= '9' {
		p.i++
	}
}

func (p *sedParser) toEOL() {
	for !p.done() && p.peek() != '\n' {
		p.i++
	}
}

// delimited reads up to the next unescaped d, leaving i after it.
func (p *sedParser) delimited(d byte) bool {
	for !p.done() {
		switch p.peek() {
		case '\\':
			p.i += 2
			continue
		case d:
			p.i++
			return true
		case '\n':
			return false
		}
		p.i++
	}
	return false
}

// twoParts reads the two delimited parts of an s or y command (pattern
// and replacement), each ending at d.
func (p *sedParser) twoParts(d byte) bool {
	if !p.delimited(d) {
		return false
	}
	return p.delimited(d)
}

// address reads one address (a line number, $, /re/, \cREc, +N, ~N).
func (p *sedParser) address() bool {
	if p.done() {
		return true
	}
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.skip("0123456789~")
	case c == '$':
		p.i++
	case c == '/':
		p.i++
		return p.regexAddress('/')
	case c == '\\':
		if p.i+1 >= len(p.s) {
			return false
		}
		d := p.s[p.i+1]
		p.i += 2
		return p.regexAddress(d)
	case c == '+' || c == '~':
		p.i++
		p.digits()
	}
	return true
}

func (p *sedParser) regexAddress(d byte) bool {
	if !p.delimited(d) {
		return false
	}
	p.skip("IM")
	return true
}

// addresses reads an address or a range and the negations after it.
func (p *sedParser) addresses() (why string) {
	const bad = "sed script has an address it cannot parse"
	if !p.address() {
		return bad
	}
	p.skip(" \t")
	if !p.done() && p.peek() == ',' {
		p.i++
		p.skip(" \t")
		if !p.address() {
			return bad
		}
		p.skip(" \t")
	}
	p.skip("! \t")
	if p.done() {
		return "sed script ends after an address"
	}
	return ""
}

// command reads one command and what follows it up to the separator.
func (p *sedParser) command() (why string) {
	c := p.peek()
	p.i++
	cmd, ok := sedCommands[c]
	if !ok {
		return fmt.Sprintf("sed command %q is not known to be read-only", string(c))
	}
	switch cmd.args {
	case sedRefuse:
		return cmd.refused
	case sedBlock:
		return ""
	case sedCount:
		p.skip(" \t")
		p.digits()
	case sedLabel:
		for !p.done() && p.peek() != '\n' && p.peek() != ';' {
			p.i++
		}
	case sedText:
		p.text()
	case sedSubst, sedTrans:
		if why := p.body(c, cmd.args == sedSubst); why != "" {
			return why
		}
	}
	return p.end()
}

// text reads a, i or c text to the end of the line; a trailing backslash
// continues it.
func (p *sedParser) text() {
	for !p.done() && p.peek() != '\n' {
		if p.peek() == '\\' {
			p.i++
		}
		p.i++
	}
}

// body reads the delimited parts of s or y and, for s, its flags.
func (p *sedParser) body(c byte, subst bool) (why string) {
	if p.done() || p.peek() == '\\' || p.peek() == '\n' {
		return fmt.Sprintf("sed %c command has an unusual delimiter", c)
	}
	d := p.peek()
	p.i++
	if !p.twoParts(d) {
		return fmt.Sprintf("sed %c command is not terminated", c)
	}
	if !subst {
		return ""
	}
	for !p.done() {
		switch f := p.peek(); {
		case f == 'w' || f == 'W':
			return "sed s///w writes a file"
		case f == 'e':
			return "sed s///e executes the pattern space as a command"
		case containsByte("gpiImM", f) || (f >= '0' && f <= '9'):
			p.i++
		default:
			return ""
		}
	}
	return ""
}

// end accepts what may follow a command: a comment, a separator or a
// brace.
func (p *sedParser) end() (why string) {
	p.skip(" \t")
	if !p.done() && p.peek() == '#' {
		p.toEOL()
	}
	if !p.done() && !containsByte(";\n}{", p.peek()) {
		return fmt.Sprintf("sed script has unexpected %q after a command", string(p.peek()))
	}
	return ""
}

package rules

import "fmt"

// sedScriptReadOnly parses a sed script conservatively and reports whether
// it only reads: no w/W (write a file), r/R (read another file), e (execute)
// commands and no s///w or s///e flags. Anything it does not understand
// counts as not read-only, with the reason.
func sedScriptReadOnly(s string) (bool, string) {
	i := 0
	n := len(s)
	skipSpace := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	toEOL := func() {
		for i < n && s[i] != '\n' {
			i++
		}
	}
	// delimited reads up to the next unescaped d, leaving i after it.
	delimited := func(d byte) bool {
		for i < n {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
			case '\n':
				return false
			}
			i++
		}
		return false
	}
	address := func() bool {
		if i >= n {
			return true
		}
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case c == '$':
			i++
		case c == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case c == '\\':
			if i+1 >= n {
				return false
			}
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case c == '+' || c == '~':
			i++
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
		return true
	}
	for i < n {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';' || s[i] == '}') {
			i++
		}
		if i >= n {
			break
		}
		if s[i] == '#' {
			toEOL()
			continue
		}
		if !address() {
			return false, "sed script has an address it cannot parse"
		}
		skipSpace()
		if i < n && s[i] == ',' {
			i++
			skipSpace()
			if !address() {
				return false, "sed script has an address it cannot parse"
			}
			skipSpace()
		}
		for i < n && (s[i] == '!' || s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= n {
			return false, "sed script ends after an address"
		}
		c := s[i]
		i++
		switch c {
		case '{':
			continue
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'l', 'L':
			skipSpace()
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < n && s[i] != '\n' && s[i] != ';' {
				i++
			}
		case 'a', 'i', 'c':
			// Text to the end of the line; a trailing backslash continues it.
			for i < n {
				if s[i] == '\\' {
					i += 2
					continue
				}
				if s[i] == '\n' {
					break
				}
				i++
			}
		case 's':
			if i >= n || s[i] == '\\' || s[i] == '\n' {
				return false, "sed s command has an unusual delimiter"
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return false, "sed s command is not terminated"
			}
		flags:
			for i < n {
				switch f := s[i]; {
				case f == 'w' || f == 'W':
					return false, "sed s///w writes a file"
				case f == 'e':
					return false, "sed s///e executes the pattern space as a command"
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || (f >= '0' && f <= '9'):
					i++
				default:
					break flags
				}
			}
		case 'y':
			if i >= n || s[i] == '\\' || s[i] == '\n' {
				return false, "sed y command has an unusual delimiter"
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return false, "sed y command is not terminated"
			}
		case 'w', 'W':
			return false, "sed w/W writes a file"
		case 'r', 'R':
			return false, "sed r/R reads another file"
		case 'e':
			return false, "sed e executes a command"
		default:
			return false, fmt.Sprintf("sed command %q is not known to be read-only", string(c))
		}
		skipSpace()
		if i < n && s[i] == '#' {
			toEOL()
		}
		if i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' && s[i] != '{' {
			return false, fmt.Sprintf("sed script has unexpected %q after a command", string(s[i]))
		}
	}
	return true, ""
}

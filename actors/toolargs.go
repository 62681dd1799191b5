package actors

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// Tool-call arguments kept in the session. The tool receives the model's
// arguments whole; the history sent back to the model, the journal and
// events keep a call's arguments whole only up to storedArgsMax. Past it,
// every top-level value longer than elidedValueMax is replaced by its
// first elidedPrefix bytes (strings) and a marker with its size and
// SHA-256, so a 10 MB WriteFile costs the session a few KB instead of its
// size in every later request and in the database (issue 26). The content
// itself is in the file the tool wrote.
const (
	storedArgsMax  = 64 << 10
	elidedValueMax = 4 << 10
	elidedPrefix   = 1 << 10
)

// storedCall returns call with its arguments as the session keeps them:
// unchanged up to storedArgsMax, else elided (see storedArgsMax).
func storedCall(call llm.ToolCall) llm.ToolCall {
	if len(call.Arguments) > storedArgsMax {
		call.Arguments = elideArgs(call.Arguments)
	}
	return call
}

// storedCalls applies storedCall to calls, sharing the slice when no call
// changes.
func storedCalls(calls []llm.ToolCall) []llm.ToolCall {
	for i, c := range calls {
		if len(c.Arguments) > storedArgsMax {
			out := make([]llm.ToolCall, len(calls))
			copy(out, calls[:i])
			for j := i; j < len(calls); j++ {
				out[j] = storedCall(calls[j])
			}
			return out
		}
	}
	return calls
}

// elideArgs rewrites a JSON object's long top-level values as markers; the
// result is still a JSON object, which providers require of a past call's
// arguments. Arguments that are not an object are replaced whole. It
// scans args in place: a decoder would buffer and unquote each long value,
// costing several times its size for what becomes a few hundred bytes.
func elideArgs(args string) string {
	i := skipSpace(args, 0)
	if i >= len(args) || args[i] != '{' {
		return elidedWhole(args)
	}
	out := make([]byte, 0, 8<<10)
	out = append(out, '{')
	i = skipSpace(args, i+1)
	for first := true; i < len(args) && args[i] != '}'; first = false {
		if !first {
			if args[i] != ',' {
				return elidedWhole(args)
			}
			out = append(out, ',')
			i = skipSpace(args, i+1)
		}
		kEnd := valueEnd(args, i)
		if i >= len(args) || args[i] != '"' || kEnd < 0 {
			return elidedWhole(args)
		}
		out = append(out, args[i:kEnd]...)
		i = skipSpace(args, kEnd)
		if i >= len(args) || args[i] != ':' {
			return elidedWhole(args)
		}
		i = skipSpace(args, i+1)
		vEnd := valueEnd(args, i)
		if vEnd <= i {
			return elidedWhole(args)
		}
		v := strings.TrimRight(args[i:vEnd], " \t\r\n")
		out = append(out, ':')
		if len(v) <= elidedValueMax {
			out = append(out, v...)
		} else {
			out = appendMarker(out, v)
		}
		i = skipSpace(args, vEnd)
	}
	if i >= len(args) || skipSpace(args, i+1) != len(args) {
		return elidedWhole(args)
	}
	out = append(out, '}')
	if !json.Valid(out) {
		return elidedWhole(args)
	}
	return string(out)
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the offset just past the JSON value starting at s[i]
// (a string, object or array; a literal ends before the next top-level
// ',' or '}'), or -1 when s ends first. It matches brackets and skips
// strings without checking the value: the elided result is validated.
func valueEnd(s string, i int) int {
	depth, inString, escaped := 0, false, false
	for j := i; j < len(s); j++ {
		c := s[j]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 0 {
					return j + 1
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
			if depth < 0 {
				return j
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// appendMarker appends, in place of the long JSON value v, a string with
// the start of v's text (for a string) and its size and hash. A string's
// size and hash are of its decoded text — the bytes WriteFile wrote —
// decoded piece by piece rather than copied whole.
func appendMarker(out []byte, v string) []byte {
	h := sha256.New()
	size, prefix := 0, ""
	if len(v) >= 2 && v[0] == '"' {
		var pre []byte
		size = unquoteTo(v[1:len(v)-1], func(b []byte) {
			h.Write(b)
			if len(pre) < elidedPrefix {
				pre = append(pre, b[:min(len(b), elidedPrefix-len(pre))]...)
			}
		})
		cut := len(pre)
		if cut == elidedPrefix {
			// Drop a rune the cut split.
			k := cut - 1
			for k > 0 && k > cut-utf8.UTFMax && !utf8.RuneStart(pre[k]) {
				k--
			}
			if !utf8.FullRune(pre[k:cut]) {
				cut = k
			}
		}
		prefix = strings.ToValidUTF8(string(pre[:cut]), "\uFFFD")
	} else {
		for k := 0; k < len(v); k += 32 << 10 {
			h.Write([]byte(v[k:min(len(v), k+32<<10)]))
		}
		size = len(v)
	}
	marker := fmt.Sprintf("%s…[Odin elided this value from the session: %d bytes, sha256 %s; the tool received it whole]",
		prefix, size, hex.EncodeToString(h.Sum(nil)))
	b, err := jsontext.AppendQuote(out, marker)
	if err != nil {
		return append(out, `"[elided]"`...)
	}
	return b
}

// unquoteTo decodes the body of a JSON string literal (between its
// quotes) as encoding/json does, handing the text to emit in pieces of at
// most 32 KiB; it returns the decoded size.
func unquoteTo(body string, emit func([]byte)) int {
	buf := make([]byte, 0, 32<<10)
	n := 0
	flush := func() {
		if len(buf) > 0 {
			emit(buf)
			n += len(buf)
			buf = buf[:0]
		}
	}
	for i := 0; i < len(body); {
		if cap(buf)-len(buf) < utf8.UTFMax {
			flush()
		}
		c := body[i]
		if c != '\\' {
			run := min(len(body)-i, cap(buf)-len(buf))
			if k := strings.IndexByte(body[i:i+run], '\\'); k >= 0 {
				run = k
			}
			buf = append(buf, body[i:i+run]...)
			i += run
			continue
		}
		if i+1 >= len(body) {
			break
		}
		switch e := body[i+1]; e {
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(body, i+2)
			if !ok {
				return n + len(buf)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if lo, ok := hex4(body, i+2); ok && i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
						buf = utf8.AppendRune(buf, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
			continue
		default: // " \\ / and, leniently, anything else
			buf = append(buf, e)
		}
		i += 2
	}
	flush()
	return n
}

// hex4 decodes the four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// elidedWhole stands for arguments that are not a JSON object.
func elidedWhole(args string) string {
	h := sha256.New()
	for k := 0; k < len(args); k += 32 << 10 {
		h.Write([]byte(args[k:min(len(args), k+32<<10)]))
	}
	b, _ := jsontext.AppendQuote(nil, fmt.Sprintf("[Odin elided %d bytes of arguments that are not a JSON object, sha256 %s]", len(args), hex.EncodeToString(h.Sum(nil))))
	return `{"odin_elided":` + string(b) + `}`
}

// droppedResult answers a call whose arguments were over the limit and
// were never kept (llm.ToolCall.Dropped): nothing ran.
func droppedResult(call llm.ToolCall) tool.Result {
	return tool.Errorf("the arguments of this %s call were %s, more than Odin accepts for one tool call (context.max_tool_argument); nothing was run. "+
		"Write large content in parts: create the file with a first part using WriteFile, then add the rest in further calls (EditTool), each of a few MB at most.",
		call.Name, tools.HumanBytes(call.Dropped))
}

package actors

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/tools"
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
// arguments. Arguments that are not an object are replaced whole.
func elideArgs(args string) string {
	dec := jsontext.NewDecoder(strings.NewReader(args))
	var out jsontext.Value
	out = append(out, '{')
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return elidedWhole(args)
	}
	first := true
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return elidedWhole(args)
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, name...)
		out = append(out, ':')
		v, err := dec.ReadValue()
		if err != nil {
			return elidedWhole(args)
		}
		if len(v) <= elidedValueMax {
			out = append(out, v...)
			continue
		}
		out = appendMarker(out, v)
	}
	if _, err := dec.ReadToken(); err != nil {
		return elidedWhole(args)
	}
	return string(append(out, '}'))
}

// appendMarker appends, in place of the long JSON value v, a string with
// the start of v's text (for a string) and its size and hash. A string's
// size and hash are of its decoded text — the bytes WriteFile wrote.
func appendMarker(out []byte, v jsontext.Value) []byte {
	prefix := ""
	text := []byte(v)
	if v.Kind() == '"' {
		if s, err := jsontext.AppendUnquote(nil, v); err == nil {
			text = s
			cut := min(elidedPrefix, len(s))
			for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
				cut--
			}
			prefix = string(s[:cut])
		}
	}
	sum := sha256.Sum256(text)
	marker := fmt.Sprintf("%s…[Odin elided this value from the session: %d bytes, sha256 %s; the tool received it whole]",
		prefix, len(text), hex.EncodeToString(sum[:]))
	b, err := jsontext.AppendQuote(out, marker)
	if err != nil {
		return append(out, `"[elided]"`...)
	}
	return b
}

// elidedWhole stands for arguments that are not a JSON object.
func elidedWhole(args string) string {
	sum := sha256.Sum256([]byte(args))
	b, _ := jsontext.AppendQuote(nil, fmt.Sprintf("[Odin elided %d bytes of arguments that are not a JSON object, sha256 %s]", len(args), hex.EncodeToString(sum[:])))
	return `{"odin_elided":` + string(b) + `}`
}

// droppedResult answers a call whose arguments were over the limit and
// were never kept (llm.ToolCall.Dropped): nothing ran.
func droppedResult(call llm.ToolCall) tools.Result {
	return tools.Errorf("the arguments of this %s call were %s, more than Odin accepts for one tool call (context.max_tool_argument); nothing was run. "+
		"Write large content in parts: create the file with a first part using WriteFile, then add the rest in further calls (EditTool), each of a few MB at most.",
		call.Name, humanSize(call.Dropped))
}

// humanSize formats a byte count for a message.
func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	yaml4 "go.yaml.in/yaml/v4"

	"github.com/odin-code/odin/internal/dotkey"
)

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) })

// YAMLErrors turns err, returned when decoding the YAML document data,
// into problems that carry the 1-based line of each fault (Source and Key
// are left for the caller). go.yaml.in/yaml/v3 leaves the line out of a
// syntax error on line 1 and reports many parser errors a line early (its
// context mark is 0-based), so a syntax error is placed by parsing data
// again with go.yaml.in/yaml/v4, whose errors carry the true position.
// Decoding errors (a wrong type, an unknown field, a duplicate key) keep
// v3's own lines, which come from the nodes and are right.
func YAMLErrors(data []byte, err error) []Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		if line, text, ok := yamlSyntaxError(data); ok {
			return []Problem{{Line: line, Msg: "yaml: " + text}}
		}
	}
	var problems []Problem
	for l := range strings.SplitSeq(msg, "\n") {
		l = strings.TrimSpace(l)
		if m := yamlLine().FindStringSubmatch(l); m != nil {
			line, _ := strconv.Atoi(m[1])
			problems = append(problems, Problem{Line: line, Msg: "yaml: " + m[2]})
		}
	}
	if len(problems) == 0 {
		// A fault v3 finds only while resolving a value (an explicit tag
		// the value does not fit: `a: !!int x`) comes without a line: the
		// first scalar that does not decode alone is the one.
		problems = append(problems, Problem{Line: badScalarLine(data), Msg: "yaml: " + msg})
	}
	return problems
}

// yamlSyntaxError parses data with yaml v4 and reports where its reader,
// scanner or parser stopped.
func yamlSyntaxError(data []byte) (line int, msg string, ok bool) {
	var v any
	err := yaml4.Unmarshal(data, &v)
	var le *yaml4.LoadError
	if err == nil || !errors.As(err, &le) || le.Mark.Line == 0 {
		return 0, "", false
	}
	line, msg = le.Mark.Line, le.Message
	// Lines, not indexes: an index counts runes, and a BOM or a CRLF
	// would shift it against the bytes.
	last := strings.Count(strings.TrimRight(string(data), " \t\r\n"), "\n") + 1
	// The construct being parsed (a flow sequence, a quoted scalar),
	// unless it too was only found at the end of the document.
	ctx := 0
	if le.ContextMsg != "" && le.ContextMark.Line > 0 && le.ContextMark.Line <= last {
		ctx = le.ContextMark.Line
	}
	if line > last {
		// Found only at the end of the document (an unclosed bracket or
		// quote): the construct left open, or else the last line written,
		// is the one to fix.
		line = last
		if ctx > 0 {
			line = ctx
		}
	}
	// A block mapping's start is the top of the file or section, no help.
	if ctx > 0 && ctx != line && !strings.Contains(le.ContextMsg, "block") {
		msg = fmt.Sprintf("%s (%s started on line %d)", msg, le.ContextMsg, ctx)
	}
	return line, msg, true
}

// badScalarLine is the line of the first scalar of data that does not
// decode on its own, or 0.
func badScalarLine(data []byte) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return 0
	}
	var walk func(n *yaml.Node) int
	walk = func(n *yaml.Node) int {
		if n.Kind == yaml.ScalarNode {
			var v any
			if n.Decode(&v) != nil {
				return n.Line
			}
			return 0
		}
		for _, c := range n.Content {
			if l := walk(c); l > 0 {
				return l
			}
		}
		return 0
	}
	return walk(&doc)
}

// YAMLKeyLines maps each dotted key of the YAML document data to the
// line it is written on, for problems found after decoding to name; nil
// when data does not parse.
func YAMLKeyLines(data []byte) map[string]int {
	pos := keyPositions(data)
	if pos == nil {
		return nil
	}
	lines := make(map[string]int, len(pos))
	for k, p := range pos {
		lines[k] = p.line
	}
	return lines
}

// keyPos is where a key is written: its 1-based line and column.
type keyPos struct{ line, col int }

// keyPositions maps each dotted key of the YAML document data ("a.b",
// "a.list[2]", as Problem.Key spells them) to where it is written; nil
// when data does not parse.
func keyPositions(data []byte) map[string]keyPos {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	pos := map[string]keyPos{}
	var walk func(prefix string, n *yaml.Node)
	walk = func(prefix string, n *yaml.Node) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if prefix != "" {
					k = prefix + "." + k
				}
				if _, seen := pos[k]; !seen {
					pos[k] = keyPos{n.Content[i].Line, n.Content[i].Column}
				}
				walk(k, n.Content[i+1])
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				k := fmt.Sprintf("%s[%d]", prefix, i)
				pos[k] = keyPos{c.Line, c.Column}
				walk(k, c)
			}
		}
	}
	walk("", doc.Content[0])
	return pos
}

// placeProblems gives each problem of a file in files (label → its keys'
// positions) that names a key the line that key is written on, and then
// orders the problems as a reader meets them: each source's together, in
// the order the sources first appear, and within a file by line, then
// column (flow style puts several keys on a line); a problem with no line
// comes after the placed ones of its source. The order they were found
// in follows the schema's and the maps' sorted keys, not the file.
func placeProblems(problems []Problem, files map[string]map[string]keyPos) {
	type placed struct {
		p               Problem
		rank, line, col int
	}
	rank := map[string]int{}
	all := make([]placed, len(problems))
	for i, p := range problems {
		if _, ok := rank[p.Source]; !ok {
			rank[p.Source] = len(rank)
		}
		at, ok := keyPos{}, false
		if p.Key != "" {
			at, ok = dotkey.Lookup(files[p.Source], p.Key)
		}
		if p.Line == 0 && ok {
			p.Line = at.line
		}
		if !ok || at.line != p.Line {
			// A syntax error's own line, or none: no column to go by.
			at = keyPos{p.Line, 0}
		}
		all[i] = placed{p: p, rank: rank[p.Source], line: at.line, col: at.col}
	}
	slices.SortStableFunc(all, func(a, b placed) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		if (a.line == 0) != (b.line == 0) {
			// The unplaced last.
			return cmp.Compare(b.line, a.line)
		}
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
	})
	for i, a := range all {
		problems[i] = a.p
	}
}

// jsonErrorLine is the line of data at which encoding/json stopped with
// err (a syntax or type error), or 0.
func jsonErrorLine(data []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return 0
	}
	if len(data) == 0 {
		return 0
	}
	off = min(max(off, 1), int64(len(data)))
	// Offset counts the byte that stopped the decoder.
	return bytes.Count(data[:off-1], []byte("\n")) + 1
}

// secondDocumentLine is the line where a second YAML document of data
// starts, or 0 when there is one: yaml.Unmarshal reads the first and
// drops the rest without a word.
func secondDocumentLine(data []byte) int {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first yaml.Node
	if dec.Decode(&first) != nil {
		return 0
	}
	for {
		var next yaml.Node
		if dec.Decode(&next) != nil {
			return 0
		}
		// A trailing "---" with nothing under it loses nothing.
		if len(next.Content) == 1 && next.Content[0].Tag == "!!null" && next.Content[0].Value == "" {
			continue
		}
		return next.Line
	}
}

package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/odin-code/odin/internal/dotkey"
)

// jsonPosition is the 1-based line and column (in runes) of byte offset
// off of data, as an editor counts them.
func jsonPosition(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

// jsonKeyOffsets maps each dotted key of the JSON document data
// ("agent.review.tools", "permissions.allow[2]") to the offset of its
// first byte (the key's opening quote, a list item's first byte); nil
// when data is not one valid JSON value. A key written twice keeps its
// first place.
func jsonKeyOffsets(data []byte) map[string]int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	offs := map[string]int64{}
	// next is the offset of the next token: InputOffset is where the
	// last one ended, before any space, comma or colon.
	next := func() int64 {
		o := dec.InputOffset()
		for o < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[o]) >= 0 {
			o++
		}
		return o
	}
	var value func(prefix string) error
	value = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				at := next()
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				if prefix != "" {
					key = prefix + "." + key
				}
				if _, seen := offs[key]; !seen {
					offs[key] = at
				}
				if err := value(key); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				key := fmt.Sprintf("%s[%d]", prefix, i)
				offs[key] = next()
				if err := value(key); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	if value("") != nil {
		return nil
	}
	return offs
}

// jsonErrorAt is where encoding/json stopped decoding data with err, and
// the dotted field it was decoding when that is known: the offset of a
// syntax or type error, -1 for another error.
func jsonErrorAt(err error) (off int64, field string) {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		// Offset counts the byte that stopped the decoder.
		return max(se.Offset-1, 0), ""
	case errors.As(err, &te):
		// A type error's offset is just past the value that did not fit.
		return te.Offset, te.Field
	}
	return -1, ""
}

// place gives n the line and column of its key in the JSON file the
// builder reads (the key's own place, else its nearest enclosing key's).
func (b *builder) place(n *Note) {
	if b.offsets == nil {
		return
	}
	if off, ok := dotkey.Lookup(b.offsets, n.Key); ok {
		n.Line, n.Col = jsonPosition(b.data, off)
	}
}

// jsonNote notes a JSON file that does not decode (what, "invalid JSON"
// or "unexpected shape"), at the place the decoder stopped, naming the
// field it was decoding.
func (b *builder) jsonNote(what string, data []byte, err error) {
	n := Note{Source: b.l.Source, Msg: what + ", ignored: " + err.Error()}
	off, field := jsonErrorAt(err)
	if off >= 0 {
		if field != "" {
			// The type error's offset is past the value; its key's place
			// is where the user looks.
			if offs := jsonKeyOffsets(data); offs != nil {
				if o, ok := offs[field]; ok {
					off = o
				}
			}
		}
		n.Line, n.Col = jsonPosition(data, off)
	}
	b.notes = append(b.notes, n)
}

// positionOf is "line:col" for notes, "" when unknown.
func positionOf(line, col int) string {
	if line <= 0 {
		return ""
	}
	if col <= 0 {
		return strconv.Itoa(line)
	}
	return strconv.Itoa(line) + ":" + strconv.Itoa(col)
}

// JSONErrorPlace is ":line:col" of the place in data where encoding/json
// stopped decoding it with err, for an error message to append to the
// file's name; "" when err carries no offset.
func JSONErrorPlace(data []byte, err error) string {
	off, _ := jsonErrorAt(err)
	if off < 0 {
		return ""
	}
	return ":" + positionOf(jsonPosition(data, off))
}

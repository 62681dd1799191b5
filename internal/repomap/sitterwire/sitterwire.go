// Package sitterwire is the protocol between the repo map and odin-sitter,
// its tree-sitter parser process: one JSON object a line each way,
// carried by helperproc. It is pure Go, so that odin (built without cgo)
// and odin-sitter (with) share it.
package sitterwire

import (
	"encoding/json"

	"github.com/odin-code/odin/internal/helperproc"
)

// Msg is one line: Odin sends "parse" (a file's language and text),
// odin-sitter answers "result" (its definitions and references, or the
// error).
type Msg struct {
	helperproc.Line

	// parse
	Lang string `json:"lang,omitempty"`
	Src  []byte `json:"src,omitempty"`

	// result: the definitions as a JSON array of objects with name, kind,
	// parent, line and sig; the references' counts by name.
	Defs  json.RawMessage `json:"defs,omitempty"`
	Refs  map[string]int  `json:"refs,omitempty"`
	Error string          `json:"error,omitempty"`
}

// Protocol operations.
const (
	OpParse  = "parse"
	OpResult = "result"
)

var ops = helperproc.Ops{helperproc.KindCall: OpParse, helperproc.KindResult: OpResult}

// Route implements helperproc.Message.
func (m Msg) Route() helperproc.Route { return ops.Route(m.Line) }

// Routed implements helperproc.Message.
func (m Msg) Routed(r helperproc.Route) Msg { m.Line = ops.Line(r); return m }

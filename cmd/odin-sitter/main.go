// Command odin-sitter is the repo map's parser process: it reads source
// files' text on stdin and answers with their definitions and references,
// parsed with tree-sitter (Python, JavaScript, TypeScript, Rust, Java).
// odin starts it inside its sandbox (no network, nothing writable, no
// secret in its environment) the first time a map needs one of those
// languages; it never opens a file itself. The protocol is one JSON
// object per line each way (internal/repomap/sitterwire): {"op": "parse",
// "id": 1, "lang": "python", "src": "<base64>"} in, {"op": "result",
// "id": 1, "defs": [...], "refs": {...}} or {..., "error": "..."} out.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/odin-code/odin/internal/helperproc"
	"github.com/odin-code/odin/internal/repomap/sitter"
	"github.com/odin-code/odin/internal/repomap/sitterwire"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-languages" {
		for _, l := range sitter.Languages() {
			fmt.Println(l)
		}
		return
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "odin-sitter:", err)
		os.Exit(1)
	}
}

// serve parses the files Odin sends, one at a time: the parser keeps its
// compiled queries between files.
func serve(r io.Reader, w io.Writer) error {
	p := sitter.New()
	defer p.Close()
	return helperproc.NewServer[sitterwire.Msg](w, true).Serve(r, func(_ context.Context, m sitterwire.Msg) sitterwire.Msg {
		defs, refs, err := p.Parse(m.Lang, m.Src)
		if err != nil {
			return sitterwire.Msg{Error: err.Error()}
		}
		raw, err := json.Marshal(defs)
		if err != nil {
			return sitterwire.Msg{Error: err.Error()}
		}
		return sitterwire.Msg{Defs: raw, Refs: refs}
	})
}

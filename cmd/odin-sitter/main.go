// Command odin-sitter is the repo map's parser process: it reads source
// files' text on stdin and answers with their definitions and references,
// parsed with tree-sitter (Python, JavaScript, TypeScript, Rust, Java).
// odin starts it inside its sandbox (no network, nothing writable, no
// secret in its environment) the first time a map needs one of those
// languages; it never opens a file itself. The protocol is one JSON
// object per line each way: {"lang": "python", "src": "<base64>"} in,
// {"defs": [...], "refs": {...}} or {"error": "..."} out.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/odin-code/odin/internal/repomap/sitter"
)

type request struct {
	Lang string `json:"lang"`
	Src  []byte `json:"src"`
}

type response struct {
	Defs  []sitter.Symbol `json:"defs,omitempty"`
	Refs  map[string]int  `json:"refs,omitempty"`
	Error string          `json:"error,omitempty"`
}

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

func serve(r io.Reader, w io.Writer) error {
	p := sitter.New()
	defer p.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out)
	for {
		var req request
		if err := dec.Decode(&req); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		var res response
		defs, refs, err := p.Parse(req.Lang, req.Src)
		if err != nil {
			res.Error = err.Error()
		} else {
			res.Defs, res.Refs = defs, refs
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
}

// Command odin-fetch is WebFetch's page process: it fetches pages with
// colly and converts HTML to Markdown with html-to-markdown, for odin.
// It has no network of its own: odin starts it inside its sandbox (no
// network, nothing writable, no secret in its environment) and makes each
// HTTP request it asks for through its own address policy. The protocol
// is one JSON object per line each way (internal/web's Msg).
package main

import (
	"fmt"
	"os"

	"github.com/odin-code/odin/internal/web/htmlproc"
)

func main() {
	if err := htmlproc.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "odin-fetch:", err)
		os.Exit(1)
	}
}

// Command odin-browser is WebBrowser's browser process: it starts a
// headless Chromium with a fresh profile and drives it over the DevTools
// protocol (chromedp), for odin. odin starts it inside its sandbox (no
// network, nothing writable but a private /tmp, no secret in its
// environment) and makes every HTTP request of the page itself, through
// its address policy. The protocol is one JSON object per line each way
// (internal/browser's Msg). When odin goes, odin-browser's input ends and
// it closes Chromium; when odin is killed, the sandbox ends it.
package main

import (
	"fmt"
	"os"

	"github.com/odin-code/odin/internal/browser/driver"
)

func main() {
	if err := driver.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "odin-browser:", err)
		os.Exit(1)
	}
}

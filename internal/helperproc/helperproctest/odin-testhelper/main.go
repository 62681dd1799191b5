// Command odin-testhelper is the helper process of helperproc's tests
// (helperproctest.Serve, its calls run concurrently).
package main

import (
	"fmt"
	"os"

	"github.com/odin-code/odin/internal/helperproc/helperproctest"
)

func main() {
	if err := helperproctest.Serve(os.Stdin, os.Stdout, false); err != nil {
		fmt.Fprintln(os.Stderr, "odin-testhelper:", err)
		os.Exit(1)
	}
}

package main

import "io"

// checkForeign lists the other agents' files Odin read, what each setting
// became and what could not be mapped. Unmapped settings are reported, not
// failed: Odin works without them.
func checkForeign(a *app, w io.Writer) (bool, string) {
	describeForeign(a, w)
	return true, ""
}

// Package fetchtest builds odin-fetch, WebFetch's page process, for the
// tests of the packages that fetch pages.
package fetchtest

import "github.com/odin-code/odin/internal/testbin"

// Wrap runs run (a TestMain's m.Run, or one wrapped by another helper)
// with odin-fetch built into a temporary directory and $ODIN_FETCH, by
// which web.FetchPath finds it, pointing at it; it returns the exit code.
func Wrap(run func() int) int {
	return testbin.Wrap("odin-fetch", "github.com/odin-code/odin/cmd/odin-fetch", "ODIN_FETCH", run)
}

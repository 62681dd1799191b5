// Package browsertest builds odin-browser, WebBrowser's browser process,
// for the tests of the packages that start it.
package browsertest

import (
	"os/exec"

	"github.com/odin-code/odin/internal/testbin"
)

// Wrap runs run (a TestMain's m.Run, or one wrapped by another helper)
// with odin-browser built into a temporary directory and $ODIN_BROWSER,
// by which browser.HelperPath finds it, pointing at it; it returns the
// exit code.
func Wrap(run func() int) int {
	return testbin.Wrap("odin-browser", "github.com/odin-code/odin/cmd/odin-browser", "ODIN_BROWSER", run)
}

// Chromium is the browser the tests drive, or "" (the test then skips
// with SkipReason).
func Chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// SkipReason says why a browser test skips where there is no Chromium.
const SkipReason = "no chromium on PATH: install Debian's chromium (apt-get install chromium) to run the browser tests"

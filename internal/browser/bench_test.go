package browser_test

import (
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/internal/browser/browsertest"
)

// BenchmarkStart measures a browser's start: odin-browser, Chromium with a
// fresh profile, the first read of a blank page, and its close (in the
// sandbox a Pool without a launch uses: bubblewrap, else Landlock).
func BenchmarkStart(b *testing.B) {
	if browsertest.Chromium() == "" {
		b.Skip(browsertest.SkipReason)
	}
	for b.Loop() {
		p, err := browser.NewPool(config.Web{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Do(b.Context(), "run", browser.Command{Action: browser.ActionRead}); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

package browser_test

import (
	"os"
	"testing"

	"github.com/odin-code/odin/internal/browser/browsertest"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Wrap(m.Run)) }

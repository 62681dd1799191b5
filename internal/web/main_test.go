package web

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind: a fetch
// or search that forgot to close a body or a connection.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

package search

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a walk or search leaves goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

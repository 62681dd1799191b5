package store_test

import (
	"testing"

	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/storetest"
)

// A grouped store keeps the whole Store contract.
func TestConformanceGrouped(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewGrouped(openTemp(t)) })
}

package sitter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/repomap"
	"github.com/odin-code/odin/internal/repomap/sitter"
)

// TestLanguagesMatchTheMapper: the repo map offers exactly the languages
// odin-sitter parses.
func TestLanguagesMatchTheMapper(t *testing.T) {
	if diff := cmp.Diff(repomap.SitterLanguages, sitter.Languages()); diff != "" {
		t.Errorf("repomap.SitterLanguages and sitter.Languages differ (-repomap +sitter):\n%s", diff)
	}
}

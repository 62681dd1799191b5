package policy

import (
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

// TestCheckInFollowsTheShell: a persistent shell's command is checked in
// the directory the shell is in. The same relative write is allowed in
// the project and the additional directories, asked outside them, and refused when the shell sits in .git;
// `cd ..` from a subdirectory stays inside, from the root it leaves.
func TestCheckInFollowsTheShell(t *testing.T) {
	f := newFixture(t)
	c, err := NewCommands(f.guard(t), config.Permissions{AllowedCommands: []string{"touch *", "cd *"}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		command, cwd string
		want         Action
	}{
		{"touch x", "", Allow},
		{"touch x", filepath.Join(f.root, "sub"), Allow},
		{"touch x", f.shared, Allow}, // an additional directory
		{"touch x", f.evil, Ask},
		{"touch x", "/", Ask},
		{"touch x", filepath.Join(f.root, ".git"), Deny},
		{"cd .. && touch x", filepath.Join(f.root, "sub"), Allow},
		{"cd .. && touch x", f.root, Ask},
		{"touch x", "relative/not/taken", Allow}, // only an absolute cwd counts
	}
	for _, tc := range cases {
		if got := c.CheckIn(tc.command, tc.cwd, messages.ModeEdit); got.Action != tc.want {
			t.Errorf("CheckIn(%q, %q) = %v, want %v (%v)", tc.command, tc.cwd, got.Action, tc.want, got.Reasons())
		}
	}
}

package compat

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// An agent in opencode.json that Odin cannot take, a key Odin lacks, a
// value of the wrong type and a syntax error are each placed at the line
// and column of the JSON file, as odin.yaml's problems are.
func TestOpencodeNotesNameLineAndColumn(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, OpencodeFile)
	write(t, path, "{\n  \"agent\": {\n    \"draft\": {\"description\": \"d\"},\n    \"ok\": {\"description\": \"d\", \"prompt\": \"p\"}\n  },\n  \"théme\": 1, \"theme\": \"dark\"\n}\n")
	r := Discover(Options{Root: root, Peers: []Peer{Opencode}})
	var got []string
	for _, n := range r.Notes {
		got = append(got, n.String())
	}
	want := []string{
		// Columns count runes: "é" is one.
		path + ":6:15: theme: Odin has no equivalent; not applied",
		path + ":6:3: théme: Odin has no equivalent; not applied",
		path + ":3:5: agent.draft: no prompt: an Odin agent needs one; not applied",
	}
	if d := cmp.Diff(want, got, sortStrings); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}

	cases := map[string]struct{ text, want string }{
		"wrong type": {"{\n  \"agent\": {\n    \"x\": {\n      \"description\": 5\n    }\n  }\n}\n", ":4:"},
		"syntax":     {"{\n  \"model\": \"a\",\n  \"agent\": {,}\n}\n", ":3:13: invalid JSON"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, OpencodeFile)
			write(t, path, tc.text)
			r := Discover(Options{Root: root, Peers: []Peer{Opencode}})
			if len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0].String(), path+tc.want) {
				t.Errorf("notes = %v, want one starting %q", r.Notes, path+tc.want)
			}
		})
	}
}

var sortStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })

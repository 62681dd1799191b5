package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMCPVisible: a server's program and the arguments naming existing
// paths under /tmp stay visible in the sandbox: the top directory under
// /tmp for a nested path (a script's node_modules beside it), the file
// itself directly in /tmp; paths elsewhere, missing ones and plain words
// add nothing.
func TestMCPVisible(t *testing.T) {
	top, err := os.MkdirTemp("/tmp", "odin-visible-")
	if err != nil {
		t.Skip("no /tmp here")
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	script := filepath.Join(top, "dist", "index.js")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := mcpVisible([]string{"node", script, "--config=" + script, filepath.Join(top, "missing.json"), "/usr/bin", "hello"}, "/")
	want := []string{top}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("visible (-want +got):\n%s", diff)
	}
	rel, err := filepath.Rel(top, script)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{top}, mcpVisible([]string{"node", "./" + rel}, top)); diff != "" {
		t.Errorf("relative to the server's dir (-want +got):\n%s", diff)
	}
}

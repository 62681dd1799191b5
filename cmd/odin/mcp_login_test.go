package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBrowserCommandsFollowBROWSER(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	got := browserCommands(env(map[string]string{"BROWSER": "firefox --new-tab:w3m %s: ", "DISPLAY": ":0"}))
	want := [][]string{{"firefox", "--new-tab"}, {"w3m", "%s"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("browserCommands (-want +got):\n%s", diff)
	}
	if got := browserCommands(env(map[string]string{})); len(got) != 0 && got[0][0] != "open" {
		t.Errorf("no BROWSER and no display: %v, want nothing to run", got)
	}
}

// The opener prints the URL and hands it to $BROWSER as one argument,
// in place of %s (here a script that records its arguments).
func TestBrowserOpenerPassesTheURLAsOneArgument(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "args")
	script := filepath.Join(dir, "fake-browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done > "+rec+".tmp && mv "+rec+".tmp "+rec+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	u := "https://as.example.com/authorize?client_id=a b&state=x;touch " + filepath.Join(dir, "pwned")
	var out bytes.Buffer
	env := func(k string) (string, bool) {
		if k == "BROWSER" {
			return script + " --flag %s", true
		}
		return "", false
	}
	if err := browserOpener(env, &out)(context.Background(), "srv", u); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), u) || !strings.Contains(out.String(), "MCP server srv") {
		t.Errorf("printed:\n%s", out.String())
	}
	var data []byte
	for i := 0; i < 500; i++ {
		if data, _ = os.ReadFile(rec); len(data) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := "[--flag]\n[" + u + "]\n"; string(data) != want {
		t.Errorf("browser got %q, want %q", data, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("the URL was run by a shell")
	}
}

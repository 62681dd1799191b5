package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestOpenBrowserKeepsTheTokenOffTheCommandLine: the opener's argv (which
// any local user can read with ps) holds no token; the private file it is
// given forwards to the URL and is gone after cleanup.
func TestOpenBrowserKeepsTheTokenOffTheCommandLine(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		t.Skip("fakes xdg-open")
	}
	bin := t.TempDir()
	rec := filepath.Join(t.TempDir(), "argv")
	fake := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + rec + ".tmp\nls -l \"$1\" >> " + rec + ".tmp\ncat \"$1\" >> " + rec + ".tmp\nmv " + rec + ".tmp " + rec + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DISPLAY", ":0")
	const token = "5ecret70ken"
	opened, cleanup := openBrowser("http://127.0.0.1:1/#token=" + token + "&session=s")
	if !opened {
		t.Fatal("the fake xdg-open did not start")
	}
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, err := os.ReadFile(rec)
		if err == nil {
			got = b
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake xdg-open never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	lines := strings.SplitN(string(got), "\n", 3)
	argv, listing, page := lines[0], lines[1], lines[2]
	if strings.Contains(argv, token) {
		t.Errorf("the token is on the opener's command line: %q", argv)
	}
	if !strings.HasPrefix(listing, "-rw-------") {
		t.Errorf("the forwarding file is not private: %q", listing)
	}
	if !strings.Contains(page, "#token="+token+"&amp;session=s") {
		t.Errorf("the file does not forward to the URL: %q", page)
	}
	cleanup()
	if _, err := os.Stat(argv); !os.IsNotExist(err) {
		t.Errorf("the forwarding file %s is left behind (%v)", argv, err)
	}
}

package logging

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSlogWritesToFileOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "odin.log")
	l, c, err := Open(path, "info")
	if err != nil {
		t.Fatal(err)
	}
	s := Slog(l).With("lib", "Proto.Actor").WithGroup("actor")
	s.Debug("hidden")
	s.Info("started", "pid", "orchestrator$1")
	s.Error("boom", "reason", "panic")
	c.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines (debug filtered), got %d:\n%s", len(lines), data)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first["message"] != "started" || first["lib"] != "Proto.Actor" || first["actor.pid"] != "orchestrator$1" || first["level"] != "info" {
		t.Errorf("unexpected record: %v", first)
	}
	if !strings.Contains(lines[1], `"level":"error"`) {
		t.Errorf("error level lost: %s", lines[1])
	}
}

func TestEmptyPathDiscards(t *testing.T) {
	l, c, err := Open("", "debug")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	Slog(l).Info("nothing") // must not panic or write anywhere
}

// A line logged after the file is closed (a goroutine outliving the app's
// Close) must not make zerolog print a write failure on stderr.
func TestLogAfterCloseIsQuiet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odin.log")
	l, c, err := Open(path, "info")
	if err != nil {
		t.Fatal(err)
	}
	l.Info().Msg("before")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	l.Info().Msg("after")
	os.Stderr = saved
	w.Close()
	got, _ := io.ReadAll(r)
	if len(got) != 0 {
		t.Fatalf("stderr after a log line past Close: %q", got)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "before") || strings.Contains(string(data), "after") {
		t.Fatalf("log file: %q", data)
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterRefusesPlaintextBeyondLoopback: without its TLS files the
// cluster wire is plaintext, so a node advertising (or listening on) a
// non-loopback address is refused before it opens the store or listens:
// no database file appears, exit code 2. Half the TLS files are refused
// too.
func TestClusterRefusesPlaintextBeyondLoopback(t *testing.T) {
	work := t.TempDir()
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	// A provider that is never called, so serve reaches its cluster flags.
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	db := filepath.Join(work, "cluster.db")
	for _, args := range [][]string{
		{"worker", "--cluster", "c", "--store", db, "--advertise", "10.1.2.3"},
		{"serve", "--cluster", "c", "--store", db, "--advertise", "192.168.0.7", "--root", work},
		{"worker", "--cluster", "c", "--store", db, "--advertise", "0.0.0.0"},
		{"worker", "--cluster", "c", "--store", db, "--cluster-bind", "0.0.0.0"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"-C", work}, args...), strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage {
			t.Errorf("odin %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, exitUsage, stdout.String(), stderr.String())
		}
		if !strings.Contains(stderr.String(), "not a loopback address") {
			t.Errorf("odin %s: stderr %q does not say why", strings.Join(args, " "), stderr.String())
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("odin %s opened the store before refusing: %v", strings.Join(args, " "), err)
		}
	}
	for _, args := range [][]string{
		{"worker", "--cluster", "c", "--store", db, "--advertise", "10.1.2.3", "--cluster-tls-cert", "c.pem"},
		{"worker", "--cluster", "c", "--store", db, "--cluster-ca", "ca.pem", "--cluster-tls-key", "k.pem"},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(append([]string{"-C", work}, args...), strings.NewReader(""), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "go together") {
			t.Errorf("odin %s: exit %d, %q", strings.Join(args, " "), code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-C", work, "worker", "--store", db}, strings.NewReader(""), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--cluster NAME is required") {
		t.Errorf("worker without --cluster: exit %d, %q", code, stderr.String())
	}
}

// TestClusterNeedsItsBuild: without -tags cluster, odin worker and serve
// --cluster say how to get cluster support instead of starting.
func TestClusterNeedsItsBuild(t *testing.T) {
	if clusterBuilt {
		t.Skip("built with -tags cluster")
	}
	work := t.TempDir()
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	db := filepath.Join(work, "cluster.db")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"-C", work, "worker", "--cluster", "c", "--store", db}, strings.NewReader(""), &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "-tags cluster") {
		t.Errorf("worker: exit %d, %q", code, stderr.String())
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the store was opened: %v", err)
	}
}

package config

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func (c *Cache) readCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

func cacheLoad(t *testing.T, c *Cache, opts LoadOptions) *Config {
	t.Helper()
	cfg, _, err := c.Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

func TestCacheReadsAgainOnlyWhenAFileChanged(t *testing.T) {
	f := newFixture(t, "max_turns: 7\n", "mode: ask\n")
	opts := f.options(nil, nil)
	opts.Environ = func() []string { return []string{"HOME=" + f.home} }
	c := NewCache()

	first := cacheLoad(t, c, opts)
	want, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, first, cmpConfig); diff != "" {
		t.Fatalf("cached load differs from Load (-want +got):\n%s", diff)
	}
	// A session that changes its copy changes nobody else's.
	first.Mode = "plan"
	first.Providers["openai"] = Provider{BaseURL: "https://evil.example/v1"}
	second := cacheLoad(t, c, opts)
	if got := c.readCount(); got != 1 {
		t.Fatalf("files read %d times for two loads of unchanged files, want 1", got)
	}
	if diff := cmp.Diff(want, second, cmpConfig); diff != "" {
		t.Fatalf("second load saw the first caller's changes (-want +got):\n%s", diff)
	}

	// An edit of the same size, its modification time put back: the
	// change time (or the size elsewhere) still tells it.
	path := filepath.Join(f.root, FileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "mode: plan") // as long as "mode: ask\n"
	if runtime.GOOS != "linux" {
		writeFile(t, path, "mode: plan\n")
	} else if err := os.Chtimes(path, time.Time{}, fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	edited := cacheLoad(t, c, opts)
	if edited.Mode != "plan" || c.readCount() != 2 {
		t.Fatalf("after editing odin.yaml: mode %q, files read %d times; want plan, 2", edited.Mode, c.readCount())
	}

	// A file that appears (the project's .mcp.json) is read too.
	writeFile(t, filepath.Join(f.root, ClaudeProjectFile), `{"mcpServers":{"fs":{"command":"fs-server"}}}`)
	if got := cacheLoad(t, c, opts); got.MCP.Servers["fs"].Command != "fs-server" {
		t.Fatalf("a new .mcp.json was not read: servers %+v", got.MCP.Servers)
	}
	// The environment is an input too.
	opts.Environ = func() []string { return []string{"HOME=" + f.home, "ODIN_MODE=edit"} }
	opts.LookupEnv = envOf(map[string]string{"HOME": f.home, "ODIN_MODE": "edit"})
	if got := cacheLoad(t, c, opts); got.Mode != "edit" {
		t.Fatalf("ODIN_MODE=edit gave mode %q", got.Mode)
	}
}

// Trust is the caller's decision, made afresh each time: the trusted and
// the untrusted load are kept apart, and neither leaks into the other.
func TestCacheKeepsTrustedAndUntrustedApart(t *testing.T) {
	f := newFixture(t, "", "permissions:\n\tallowed_commands: [\"curl *\"]\n")
	opts := f.options(nil, nil)
	opts.Environ = func() []string { return []string{"HOME=" + f.home} }
	c := NewCache()
	untrusted := opts
	untrusted.IgnoreProjectWidening = true

	if got := cacheLoad(t, c, untrusted); len(got.Permissions.AllowedCommands) != 0 {
		t.Fatalf("untrusted load honours the project: %v", got.Permissions.AllowedCommands)
	}
	// `odin trust` now: the next activation asks for the trusted load.
	if got := cacheLoad(t, c, opts); len(got.Permissions.AllowedCommands) != 1 {
		t.Fatalf("trusted load: allowed %v, want the project's", got.Permissions.AllowedCommands)
	}
	// Trust withdrawn (or the project changed since): untrusted again,
	// from the cache, still without the project's widening.
	got, src, err := c.Load(untrusted)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Permissions.AllowedCommands) != 0 || len(src.Dropped) != 1 {
		t.Fatalf("untrusted after trusted: allowed %v, dropped %v", got.Permissions.AllowedCommands, src.Dropped)
	}
	if c.readCount() != 2 {
		t.Fatalf("files read %d times, want 2 (once per trust decision)", c.readCount())
	}
}

// BenchmarkConfigLoad compares reading and decoding the files (Load)
// with a cache hit (file identities checked, a deep copy returned).
func BenchmarkConfigLoad(b *testing.B) {
	project := "mode: ask\npermissions:\n  allowed_commands: [\"make *\"]\nquality:\n  test: go test ./...\n"
	f := fixture{root: b.TempDir(), userDir: b.TempDir(), home: b.TempDir()}
	for path, content := range map[string]string{filepath.Join(f.root, FileName): project, filepath.Join(f.userDir, FileName): "max_turns: 7\n"} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	opts := f.options(nil, nil)
	opts.Environ = os.Environ
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := Load(opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		c := NewCache()
		for b.Loop() {
			if _, _, err := c.Load(opts); err != nil {
				b.Fatal(err)
			}
		}
	})
}

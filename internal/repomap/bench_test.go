package repomap

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkBuildNetHTTP is a cold map of the Go toolchain's net/http: every
// file read, hashed and parsed, ranked and rendered at the default budget.
func BenchmarkBuildNetHTTP(b *testing.B) {
	dir := gorootSrc(b, "net/http")
	for b.Loop() {
		m := New(dir, Options{})
		if _, err := m.Map(b.Context(), Request{}); err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

// BenchmarkRefreshOneFileNetHTTP is the incremental case: a copy of
// net/http already mapped, one file changed, the map asked for again.
func BenchmarkRefreshOneFileNetHTTP(b *testing.B) {
	dir := copyTree(b, gorootSrc(b, "net/http"))
	m := New(dir, Options{CacheDir: b.TempDir()})
	defer m.Close()
	if _, err := m.Map(b.Context(), Request{}); err != nil {
		b.Fatal(err)
	}
	target := filepath.Join(dir, "header.go")
	orig, err := os.ReadFile(target)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		if err := os.WriteFile(target, fmt.Appendf(append([]byte(nil), orig...), "\nfunc touched%d() {}\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
		res, err := m.Map(b.Context(), Request{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Refresh.Parsed != 1 {
			b.Fatalf("refresh parsed %d files, want 1", res.Refresh.Parsed)
		}
	}
}

func copyTree(b *testing.B, src string) string {
	dst := b.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
	return dst
}

package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchTree writes files files of about 1 KiB in 100 directories.
func benchTree(b *testing.B, files int) string {
	b.Helper()
	root := b.TempDir()
	body := strings.Repeat("x", 1000)
	for i := range files {
		dir := filepath.Join(root, fmt.Sprintf("pkg%02d", i%100))
		if i < 100 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.go", i)), []byte(fmt.Sprintf("%d %s\n", i, body)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

func benchWorkspace(b *testing.B, root string) *Workspace {
	b.Helper()
	blobs, err := NewBlobs(filepath.Join(b.TempDir(), "blobs"), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = blobs.Close() })
	w, err := NewWorkspace(WorkspaceOptions{Root: root, Blobs: blobs})
	if err != nil {
		b.Fatal(err)
	}
	// The files were just written: judged by the real clock they would
	// all be racy (re-read) for racyWindow.
	w.now = func() time.Time { return time.Now().Add(time.Hour) }
	return w
}

// BenchmarkWorkspaceScan10k measures a command's snapshot on a 10,000-file
// tree: the first scan of a session (every file hashed and copied) and a
// repeated one (nothing changed: a stat walk). files-read/op says how many
// files a scan read.
func BenchmarkWorkspaceScan10k(b *testing.B) {
	root := benchTree(b, 10_000)
	b.Run("first", func(b *testing.B) {
		var reads int64
		for b.Loop() {
			b.StopTimer()
			w := benchWorkspace(b, root)
			b.StartTimer()
			if _, err := w.Begin(b.Context()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			reads += w.reads.Load()
			_ = w.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(reads)/float64(b.N), "files-read/op")
	})
	b.Run("repeat", func(b *testing.B) {
		w := benchWorkspace(b, root)
		if _, err := w.Begin(b.Context()); err != nil {
			b.Fatal(err)
		}
		start := w.reads.Load()
		for b.Loop() {
			if _, err := w.End(b.Context()); err != nil {
				b.Fatal(err)
			}
			if _, err := w.Begin(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(w.reads.Load()-start)/float64(2*b.N), "files-read/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N)/1e6, "ms/scan")
	})
}

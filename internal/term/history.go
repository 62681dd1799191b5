package term

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/odin-code/odin/internal/fsutil"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultHistoryLimit is how many entries a history file keeps.
const DefaultHistoryLimit = 1000

// History is the REPL's input history: the entries in memory, oldest
// first, and the file they persist to. Each entry is one JSON string per
// line, so multi-line inputs survive. Adding appends one line with a single
// write; when the file grows past twice the limit it is rewritten through a
// temporary file and a rename, so it is never left half-written. A History
// is not safe for concurrent use.
type History struct {
	path    string
	limit   int
	entries []string
	lines   int // entries in the file, to know when to compact it
}

// LoadHistory reads the history at path ("" keeps it in memory only). A
// missing file is an empty history; unreadable lines are skipped.
func LoadHistory(path string, limit int) (*History, error) {
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	h := &History{path: path, limit: limit}
	if path == "" {
		return h, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("term: history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		h.lines++
		var s string
		if json.Unmarshal(sc.Bytes(), &s) != nil || s == "" {
			continue
		}
		h.entries = append(h.entries, s)
	}
	if err := sc.Err(); err != nil {
		return h, fmt.Errorf("term: history %s: %w", path, err)
	}
	if len(h.entries) > limit {
		h.entries = h.entries[len(h.entries)-limit:]
	}
	return h, nil
}

// Entries returns the entries, oldest first. The slice must not be
// modified.
func (h *History) Entries() []string { return h.entries }

// Len is the number of entries.
func (h *History) Len() int { return len(h.entries) }

// At returns entry i (0 is the oldest).
func (h *History) At(i int) string { return h.entries[i] }

// Add records an entry, skipping blanks and an immediate repeat, and
// persists it. An error leaves the entry in memory.
func (h *History) Add(s string) error {
	if strings.TrimSpace(s) == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == s) {
		return nil
	}
	h.entries = append(h.entries, s)
	if len(h.entries) > h.limit {
		h.entries = h.entries[len(h.entries)-h.limit:]
	}
	if h.path == "" {
		return nil
	}
	if h.lines+1 > 2*h.limit {
		return h.rewrite()
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("term: history: %w", err)
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("term: history: %w", err)
	}
	_ = f.Chmod(0o600) // a file an older version made with a wider mode
	line, _ := json.Marshal(s)
	_, werr := f.Write(append(line, '\n'))
	cerr := f.Close()
	if werr != nil || cerr != nil {
		return fmt.Errorf("term: history: %w", errors.Join(werr, cerr))
	}
	h.lines++
	return nil
}

// rewrite replaces the file with the entries in memory.
func (h *History) rewrite() error {
	dir := filepath.Dir(h.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("term: history: %w", err)
	}
	var b bytes.Buffer
	for _, e := range h.entries {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := fsutil.WriteFileAtomic(h.path, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("term: history: %w", err)
	}
	h.lines = len(h.entries)
	return nil
}

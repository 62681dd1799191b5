package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/fsutil"
)

// Store records which projects the user trusts, so that what a
// project supplies that could run code, send data, change the model
// endpoint or a mode, or replace a built-in agent (config.TrustItem: its
// odin.yaml keys, agent and command files, check commands) is honoured only
// after the user said so once. An entry is keyed by the project's resolved
// root and holds the fingerprint of all those items together
// (config.TrustFingerprint) and the items as shown: when any of them
// changes the project must be trusted again, and Previous tells what was
// trusted before, so the user can see what changed.
//
// The store is one JSON file (trust.json in Odin's state dir) written
// atomically with mode 0600. A missing or unreadable file trusts nothing.
// A Store is safe for concurrent use within a process; two processes
// trusting at the same instant may lose one of the two entries, never the
// file.
//
// The fingerprint covers what the entries say (a server's command line),
// not the files they run: those are pinned per entry (TrustPinned,
// Pinned), so that a rewritten script stops its own entry only.
type Store struct {
	path string
	now  func() time.Time
	mu   sync.Mutex
}

type trustFile struct {
	Version  int                   `json:"version"`
	Projects map[string]trustEntry `json:"projects"`
}

type trustEntry struct {
	Fingerprint string    `json:"fingerprint"`
	TrustedAt   time.Time `json:"trusted_at"`
	Items       []string  `json:"items,omitempty"`
	// Pinned marks a record written with Pins (an entry without files
	// then has none): a record from before pinning lacks it, and its
	// entries that execute project files must be trusted again.
	Pinned bool            `json:"pinned,omitempty"`
	Pins   map[string]Pins `json:"pins,omitempty"`
}

// NewStore returns the store kept in stateDir (created on first
// write); now stamps entries (nil: time.Now).
func NewStore(stateDir string, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{path: filepath.Join(stateDir, "trust.json"), now: now}
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Trusted reports whether root was trusted with this fingerprint.
func (s *Store) Trusted(root, fingerprint string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read()
	if err != nil {
		return false
	}
	e, ok := f.Projects[canonicalRoot(root)]
	return ok && fingerprint != "" && e.Fingerprint == fingerprint
}

// Trust records that the user trusts root with the items whose fingerprint
// is given (items as shown to the user, kept for Previous), replacing an
// earlier entry for root.
func (s *Store) Trust(root, fingerprint string, items ...string) error {
	if fingerprint == "" {
		return errors.New("policy: trust: empty fingerprint")
	}
	return s.update(func(f *trustFile) {
		f.Projects[canonicalRoot(root)] = trustEntry{Fingerprint: fingerprint, TrustedAt: s.now().UTC(), Items: items}
	})
}

// TrustPinned is Trust that also records, by entry ("MCP server 'x'"),
// the project files each trusted entry executes with their digests
// (PinProgram): an entry whose files change no longer runs (Pinned).
func (s *Store) TrustPinned(root, fingerprint string, pins map[string]Pins, items ...string) error {
	if fingerprint == "" {
		return errors.New("policy: trust: empty fingerprint")
	}
	if pins == nil {
		pins = map[string]Pins{}
	}
	return s.update(func(f *trustFile) {
		f.Projects[canonicalRoot(root)] = trustEntry{Fingerprint: fingerprint, TrustedAt: s.now().UTC(), Items: items,
			Pinned: true, Pins: pins}
	})
}

// Pinned returns the file pins recorded for root's entries; ok is false
// when root is not trusted or was trusted before Odin pinned files (its
// entries that execute project files must then be trusted again).
func (s *Store) Pinned(root string) (pins map[string]Pins, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read()
	if err != nil {
		return nil, false
	}
	e, found := f.Projects[canonicalRoot(root)]
	if !found || !e.Pinned {
		return nil, false
	}
	if e.Pins == nil {
		e.Pins = map[string]Pins{}
	}
	return e.Pins, true
}

// Previous returns the items root was last trusted with, and whether it
// was trusted at all (with any fingerprint).
func (s *Store) Previous(root string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read()
	if err != nil {
		return nil, false
	}
	e, ok := f.Projects[canonicalRoot(root)]
	return e.Items, ok
}

// Revoke forgets root.
func (s *Store) Revoke(root string) error {
	return s.update(func(f *trustFile) { delete(f.Projects, canonicalRoot(root)) })
}

func (s *Store) update(change func(*trustFile)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read()
	if err != nil {
		return fmt.Errorf("policy: trust store %s is unreadable (%w); fix or delete it", s.path, err)
	}
	change(f)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("policy: trust store: %w", err)
	}
	return writeFileAtomic(s.path, append(data, '\n'), 0o600)
}

// read returns the file's content; a missing file is an empty store.
func (s *Store) read() (*trustFile, error) {
	f := &trustFile{Version: 1, Projects: map[string]trustEntry{}}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, err
	}
	if f.Projects == nil {
		f.Projects = map[string]trustEntry{}
	}
	return f, nil
}

// canonicalRoot resolves root's symlinks so that one project has one key.
func canonicalRoot(root string) string {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		return real
	}
	return filepath.Clean(root)
}

// writeFileAtomic writes data to path through fsutil.WriteFileAtomic,
// creating the directory first.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	if err := fsutil.WriteFileAtomic(path, data, perm); err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	return nil
}

package repomap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/search"
	"github.com/odin-code/odin/internal/stackgrow"
)

// Limits of a map.
const (
	// DefaultMaxFiles bounds the files one map covers, so that a refresh
	// of a huge tree stays bounded; the map says when it was cut.
	DefaultMaxFiles = 20000
	// DefaultMaxFileSize skips bigger files: they are generated code or
	// data, not structure a model needs.
	DefaultMaxFileSize = 512 << 10
	// cacheVersion changes whenever what a fileData holds changes, so an
	// old cache is rebuilt rather than misread.
	cacheVersion = 1
)

// ErrOutside is returned for a scope that is not inside the mapped root.
var ErrOutside = errors.New("repomap: scope is outside the project root")

// skipDirs are directories of dependencies and build output that hold no
// project structure, skipped even when no ignore file names them.
var skipDirs = []string{"node_modules", "vendor", "third_party", "target", "dist", "build", "__pycache__", "site-packages", "venv", ".venv"}

// Symbol is one definition in a file.
type Symbol struct {
	// Name is the defined identifier.
	Name string
	// Kind is what it is: func, method, type, class, interface, ...
	Kind string
	// Parent is the type, class, trait or impl the symbol belongs to.
	Parent string
	// Line is the 1-based line of the definition.
	Line int
	// Sig is its signature on one line (no body).
	Sig string
}

// fileData is what a parse keeps of one file.
type fileData struct {
	Hash string
	Lang string
	Defs []Symbol
	Refs map[string]int
	// Err says why the file could not be parsed (it is then mapped
	// without definitions).
	Err string
}

// Options configure a Mapper.
type Options struct {
	// CacheDir holds the cache file; empty keeps the cache in memory only.
	CacheDir string
	// MaxFiles and MaxFileSize default to DefaultMaxFiles and
	// DefaultMaxFileSize.
	MaxFiles    int
	MaxFileSize int64
	// Workers parse in parallel; default GOMAXPROCS.
	Workers int
	// Launch starts odin-sitter, the tree-sitter parser process (see
	// Launch); nil runs it in a sandbox of its own, never plainly.
	Launch Launch
	// Exclude, when set, leaves files and directories out of the map (the
	// read deny list); see search.WalkOptions.Exclude.
	Exclude func(path string, typ fs.FileMode) bool
}

// Mapper maps the code under one root. Create it with New.
type Mapper struct {
	root   string
	opts   Options
	langs  *languages
	mu     sync.Mutex // serializes refreshes and guards files
	loaded bool
	files  map[string]*fileData
	// warm is when a Prewarm refresh finished and warmStats what it did;
	// the next Map within prewarmFresh uses it instead of walking again.
	warm      time.Time
	warmStats RefreshStats
	maps      int // Map calls so far: a Prewarm overtaken by one is moot
}

// prewarmFresh is how long a Prewarm's refresh stands in for the next
// Map's: long enough to cover a session's start, short enough that a
// user's edit before the first message is seen.
const prewarmFresh = 2 * time.Second

// Prewarm refreshes the map in the background (loading the cache, walking
// and parsing what changed), so that the first Map of a new session, the
// map in its first request, does not wait for it. ctx and timeout bound
// the work (a Map waits for it). The next Map within prewarmFresh reuses
// the refresh; a later one walks the tree again as usual.
func (m *Mapper) Prewarm(ctx context.Context, timeout time.Duration) {
	m.mu.Lock()
	n := m.maps
	m.mu.Unlock()
	go func() {
		stackgrow.To16K() // parsing goes deep (internal/stackgrow)
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.maps != n {
			return // a Map came first and refreshed
		}
		if st, err := m.refreshLocked(ctx); err == nil {
			m.warm, m.warmStats = time.Now(), st
		}
	}()
}

// New returns a Mapper of the tree at root (absolute).
func New(root string, opts Options) *Mapper {
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	return &Mapper{root: filepath.Clean(root), opts: opts, langs: newLanguages(opts.Launch), files: map[string]*fileData{}}
}

// Root is the directory the Mapper maps.
func (m *Mapper) Root() string { return m.root }

// Close releases the parsers' native resources, after any refresh in
// flight. A later use compiles them again.
func (m *Mapper) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.langs.close()
}

// RefreshStats says what a refresh did.
type RefreshStats struct {
	// Files is the number of source files mapped.
	Files int
	// Parsed were (re)parsed because they were new or their hash changed;
	// Removed were dropped because they are gone.
	Parsed, Removed int
	// Unsupported counts files of a language this build cannot parse.
	Unsupported int
	// Truncated is set when the tree has more than MaxFiles source files.
	Truncated bool
}

// Refresh brings the map up to date with the files on disk: new files and
// files whose content hash changed are parsed, deleted ones dropped,
// unchanged ones kept as they were. The cache file, if any, is rewritten
// when something changed. A cache that cannot be written is not an error:
// the map is still correct, only the next process starts colder.
func (m *Mapper) Refresh(ctx context.Context) (RefreshStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refreshLocked(ctx)
}

type candidate struct {
	rel, abs, lang string
}

func (m *Mapper) refreshLocked(ctx context.Context) (RefreshStats, error) {
	var st RefreshStats
	if !m.loaded {
		m.loaded = true
		m.loadCache()
	}
	cands, unsupported, truncated, err := m.collect(ctx)
	if err != nil {
		return st, err
	}
	st.Unsupported, st.Truncated, st.Files = unsupported, truncated, len(cands)

	type outcome struct {
		rel  string
		data *fileData
	}
	prev := maps.Clone(m.files)
	jobs := make(chan candidate)
	results := make(chan outcome)
	var wg sync.WaitGroup
	for range m.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				results <- outcome{c.rel, m.load(c, prev)}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, c := range cands {
			select {
			case jobs <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	seen := make(map[string]bool, len(cands))
	changed := false
	for r := range results {
		if r.data == nil { // unreadable now: keep nothing stale
			continue
		}
		seen[r.rel] = true
		if old, ok := m.files[r.rel]; ok && old == r.data {
			continue
		}
		m.files[r.rel] = r.data
		st.Parsed++
		changed = true
	}
	if err := ctx.Err(); err != nil {
		// What was parsed is valid: keep it, so the next refresh goes on
		// from there instead of starting over.
		if changed {
			m.saveCache()
		}
		return st, err
	}
	for rel := range m.files {
		if !seen[rel] {
			delete(m.files, rel)
			st.Removed++
			changed = true
		}
	}
	if changed {
		m.saveCache()
	}
	return st, nil
}

// collect lists the source files under the root that this Mapper can map,
// in path order, at most MaxFiles of them.
func (m *Mapper) collect(ctx context.Context) ([]candidate, int, bool, error) {
	var globs []string
	for _, d := range skipDirs {
		globs = append(globs, "!"+d+"/")
	}
	filter, err := search.NewGlobFilter(globs...)
	if err != nil {
		return nil, 0, false, err
	}
	var mu sync.Mutex
	var cands []candidate
	unsupported := 0
	err = search.Walk(ctx, m.root, search.WalkOptions{Globs: filter, Exclude: m.opts.Exclude}, func(_ int, e search.Entry) error {
		if !e.Type.IsRegular() {
			return nil
		}
		rel := filepath.ToSlash(e.Rel)
		lang := languageOf(rel)
		if lang == "" {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if !m.langs.supports(lang) {
			unsupported++
			return nil
		}
		cands = append(cands, candidate{rel: rel, abs: e.Path, lang: lang})
		return nil
	})
	if err != nil {
		return nil, 0, false, fmt.Errorf("repomap: walk %s: %w", m.root, err)
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].rel < cands[j].rel })
	truncated := false
	if len(cands) > m.opts.MaxFiles {
		cands, truncated = cands[:m.opts.MaxFiles], true
	}
	return cands, unsupported, truncated, nil
}

// load returns the data of one file: the cached entry when the content
// hash is unchanged (the very same pointer, which tells the caller nothing
// changed), else a fresh parse. prev is a snapshot of the files, read
// by the workers while the refresh loop updates the live map. Nil means the file cannot be read or is too
// big; it is then left out of the map.
func (m *Mapper) load(c candidate, prev map[string]*fileData) *fileData {
	src, err := readLimited(c.abs, m.opts.MaxFileSize)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(src)
	hash := hex.EncodeToString(sum[:16])
	old := prev[c.rel]
	if old != nil && old.Hash == hash && old.Lang == c.lang {
		return old
	}
	d := &fileData{Hash: hash, Lang: c.lang}
	defs, refs, err := m.langs.parse(c.lang, src)
	if err != nil {
		d.Err = err.Error()
	}
	d.Defs, d.Refs = defs, refs
	return d
}

func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return buf.Bytes(), nil
}

// languageOf names the language of a file by its extension; "" for files
// that are not mapped (minified bundles and declaration-only maps
// included).
func languageOf(rel string) string {
	base := path.Base(rel)
	if strings.HasSuffix(base, ".min.js") || strings.HasSuffix(base, ".bundle.js") {
		return ""
	}
	switch path.Ext(base) {
	case ".go":
		return "go"
	case ".py", ".pyi":
		return "python"
	case ".js", ".mjs", ".cjs", ".jsx":
		return "javascript"
	case ".ts", ".mts", ".cts":
		return "typescript"
	case ".tsx":
		return "tsx"
	case ".rs":
		return "rust"
	case ".java":
		return "java"
	}
	return ""
}

// isTest reports whether rel is a test file by the conventions of its
// language: its definitions are ranked low (its references still count).
func isTest(rel string) bool {
	base := path.Base(rel)
	switch {
	case strings.HasSuffix(base, "_test.go"),
		strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"),
		strings.HasSuffix(base, "_test.py"),
		strings.Contains(base, ".test."), strings.Contains(base, ".spec."),
		strings.HasSuffix(base, "Test.java"), strings.HasSuffix(base, "Tests.java"):
		return true
	}
	for _, dir := range strings.Split(path.Dir(rel), "/") {
		switch dir {
		case "test", "tests", "testdata", "__tests__", "testing":
			return true
		}
	}
	return false
}

// cacheFile is the on-disk form of a Mapper's files.
type cacheFile struct {
	Version int
	Root    string
	Files   map[string]*fileData
}

func (m *Mapper) cachePath() string {
	if m.opts.CacheDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(m.root))
	return filepath.Join(m.opts.CacheDir, filepath.Base(m.root)+"-"+hex.EncodeToString(sum[:6])+".gob")
}

// loadCache fills files from the cache file. A missing, unreadable or
// outdated cache is ignored: the refresh then parses everything.
func (m *Mapper) loadCache() {
	p := m.cachePath()
	if p == "" {
		return
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return
	}
	var c cacheFile
	if gob.NewDecoder(bytes.NewReader(raw)).Decode(&c) != nil || c.Version != cacheVersion || c.Root != m.root {
		return
	}
	for rel, d := range c.Files {
		if d != nil {
			m.files[rel] = d
		}
	}
}

func (m *Mapper) saveCache() {
	p := m.cachePath()
	if p == "" {
		return
	}
	var buf bytes.Buffer
	if gob.NewEncoder(&buf).Encode(cacheFile{Version: cacheVersion, Root: m.root, Files: m.files}) != nil {
		return
	}
	if fsutil.PrivateDir(m.opts.CacheDir) != nil {
		return
	}
	// Renamed into place but not synced: a cache torn by a crash fails to
	// decode and is rebuilt, so it is not worth an fsync on every refresh.
	f, err := os.CreateTemp(m.opts.CacheDir, ".repomap-*")
	if err != nil {
		return
	}
	_, werr := f.Write(buf.Bytes())
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), p) != nil {
		_ = os.Remove(f.Name())
	}
}

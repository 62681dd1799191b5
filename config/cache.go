package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"sync"
	"time"
)

// Cache keeps what Load returned, per set of inputs, for a process that
// loads the same projects' configuration again and again (a cluster
// worker activating sessions): decoding the files is most of what
// setting up a session costs. Every use checks the identity of each file
// Load reads (path, size, modification and change time, inode; a file
// absent stays absent), so an edited odin.yaml is read on the next use.
// Each caller gets its own deep copy: nothing is shared between
// sessions. A Cache decides nothing about trust: callers ask for the
// trusted or untrusted load (LoadOptions.IgnoreProjectWidening) as they
// would of Load, after consulting the trust store each time.
//
// A Cache is safe for concurrent use. The zero value is not usable; use
// NewCache.
type Cache struct {
	mu sync.Mutex
	// entries holds one load per project and trust decision: a load
	// with other inputs replaces it, so the cache stays as small as the
	// set of projects.
	entries map[slot]cacheEntry
	// reads counts the loads that read the files, for tests.
	reads int
}

type cacheEntry struct {
	inputs string // cacheKey of the options
	files  []fileIdentity
	cfg    *Config
	src    *Sources
}

type slot struct {
	root      string
	untrusted bool
}

// fileIdentity is what tells a file changed without reading it.
type fileIdentity struct {
	path   string
	exists bool
	size   int64
	mtime  time.Time
	ctime  int64 // ns; 0 where the platform has none
	inode  uint64
	mode   os.FileMode
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{entries: map[slot]cacheEntry{}} }

// Load is Load(opts), from the cache when no input changed. Options whose
// environment cannot be listed (Environ nil) are loaded every time: the
// cache could not tell a changed variable.
func (c *Cache) Load(opts LoadOptions) (*Config, *Sources, error) {
	if opts.Environ == nil || len(opts.Skip) > 0 {
		return Load(opts)
	}
	key, inputs := slot{opts.Root, opts.IgnoreProjectWidening}, cacheKey(opts)
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && e.inputs == inputs && slices.Equal(e.files, identify(filePaths(e.files))) {
		return e.cfg.clone(opts.LookupEnv), e.src.clone(), nil
	}
	// The identities are taken before reading: an edit racing the read
	// then leaves an entry that no longer matches, never a stale one that
	// does.
	paths := inputFiles(opts)
	before := identify(paths)
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	cfg, src, err := Load(opts)
	if err != nil {
		// Errors are not kept: the next use reports the problem afresh
		// (a prompt file created meanwhile, say).
		return cfg, src, err
	}
	// A prompt file is checked by validation, so its identity is part of
	// the result too.
	var extra []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		if p := cfg.Agents[name].PromptFile; p != "" {
			extra = append(extra, p)
		}
	}
	files := append(before, identify(extra)...)
	c.mu.Lock()
	c.entries[key] = cacheEntry{inputs: inputs, files: files, cfg: cfg.clone(cfg.Env), src: src.clone()}
	c.mu.Unlock()
	return cfg, src, nil
}

// inputFiles are the files Load reads for opts.
func inputFiles(opts LoadOptions) []string {
	env := opts.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	var paths []string
	if home := env.lookup("HOME"); home != "" {
		paths = append(paths, filepath.Join(home, ClaudeUserFile))
	}
	userDir := opts.UserDir
	if userDir == "" {
		userDir = UserDir(env)
	}
	if userDir != "" {
		paths = append(paths, filepath.Join(userDir, FileName))
	}
	if opts.Root != "" {
		paths = append(paths, filepath.Join(opts.Root, FileName), filepath.Join(opts.Root, ClaudeProjectFile))
	}
	return paths
}

func filePaths(ids []fileIdentity) []string {
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = id.path
	}
	return paths
}

func identify(paths []string) []fileIdentity {
	ids := make([]fileIdentity, len(paths))
	for i, p := range paths {
		ids[i].path = p
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		ids[i].exists, ids[i].size, ids[i].mtime, ids[i].mode = true, fi.Size(), fi.ModTime(), fi.Mode()
		ids[i].inode, ids[i].ctime = statIdentity(fi)
	}
	return ids
}

// cacheKey names every input of Load other than the files: the options,
// the environment and the foreign layers' settings, hashed.
func cacheKey(opts LoadOptions) string {
	h := sha256.New()
	env := opts.Environ()
	sort.Strings(env)
	// fmt prints maps with their keys sorted, so equal trees print alike.
	fmt.Fprintf(h, "%q\x00%q\x00%t\x00%q\x00%#v\x00", opts.Root, opts.UserDir, opts.IgnoreProjectWidening, env, opts.Flags)
	for _, l := range opts.Foreign {
		fmt.Fprintf(h, "%q\x00%t\x00%#v\x00", l.Label, l.Project, l.Tree)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// clone returns a deep copy of c whose Env is env (Load's nil default
// kept as os.LookupEnv).
func (c *Config) clone(env EnvFunc) *Config {
	if env == nil {
		env = os.LookupEnv
	}
	out := copyValue(reflect.ValueOf(c)).Interface().(*Config)
	out.Env = env
	return out
}

func (s *Sources) clone() *Sources {
	if s == nil {
		return nil
	}
	out := *s
	out.Env = slices.Clone(s.Env)
	out.Flags = slices.Clone(s.Flags)
	out.Dropped = slices.Clone(s.Dropped)
	out.origins = maps.Clone(s.origins)
	out.trust = slices.Clone(s.trust)
	return &out
}

// copyValue copies v with its own maps, slices and pointers. Functions
// and channels are shared; Config's types have no unexported fields, so
// every field can be set.
func copyValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Elem().Type())
		out.Elem().Set(copyValue(v.Elem()))
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(copyValue(v.Elem()))
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), copyValue(it.Value()))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(copyValue(v.Index(i)))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(copyValue(v.Index(i)))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v) // unexported scalars, if a type ever gains one
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(copyValue(v.Field(i)))
			}
		}
		return out
	default:
		return v
	}
}

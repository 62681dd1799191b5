package main

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/dotkey"
)

// configLocator answers the roster's Locate: the config file that set a
// dotted key ("odin.yaml" for the project's, the full path for the
// user's, as config problems name them) and the line the key, or its
// nearest enclosing key, is written on there. Each YAML file is parsed
// once, on the first error that needs it; a key set by the environment
// or flags, or by another agent's file, names its source with no line.
func (a *app) configLocator() func(key string) (string, int) {
	var mu sync.Mutex
	lines := map[string]map[string]int{}
	return func(key string) (string, int) {
		for k := range dotkey.Enclosing(key) {
			label := a.src.Origin(k)
			if label != "" && label != "default" {
				return label, a.keyLine(&mu, lines, label, key)
			}
		}
		return "", 0
	}
}

// keyLine is the line of key (or its nearest enclosing key) in the YAML
// config file label names, 0 when it is not a YAML file or not there.
func (a *app) keyLine(mu *sync.Mutex, cache map[string]map[string]int, label, key string) int {
	path := label
	if label == config.FileName {
		path = filepath.Join(a.root, config.FileName)
	}
	if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" || !filepath.IsAbs(path) {
		return 0
	}
	mu.Lock()
	defer mu.Unlock()
	kl, ok := cache[path]
	if !ok {
		if data, err := os.ReadFile(path); err == nil {
			kl = config.YAMLKeyLines(data)
		}
		cache[path] = kl
	}
	l, _ := dotkey.Lookup(kl, key)
	return l
}

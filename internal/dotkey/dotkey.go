package dotkey

import (
	"iter"
	"strings"
)

// Enclosing yields key, then each key that encloses it, nearest first:
// "a.b[2].c", "a.b[2]", "a.b", "a". A lookup by key (a line, a source)
// takes the first that answers, so that a key a file leaves out, or
// writes inside a value it does not index (a flow list, a whole
// section), is placed at the nearest key the file does write.
func Enclosing(key string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := key; k != ""; {
			if !yield(k) {
				return
			}
			i := strings.LastIndexAny(k, ".[")
			if i < 0 {
				return
			}
			k = k[:i]
		}
	}
}

// Lookup is the value m holds for key or, when it holds none, for the
// nearest key enclosing it; ok is false when m holds none of them.
func Lookup[V any](m map[string]V, key string) (v V, ok bool) {
	for k := range Enclosing(key) {
		if v, ok = m[k]; ok {
			return v, true
		}
	}
	return v, false
}

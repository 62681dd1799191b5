package config

import (
	"reflect"
	"slices"
)

// ForeignLayer is settings read from another agent's file (Claude Code's
// settings, Codex's config.toml, opencode.json; see internal/compat), in
// odin.yaml's shape.
type ForeignLayer struct {
	// Label names the file in origins and problems (its path).
	Label string
	// Project is true for a project's file: it joins the project layer
	// and waits for `odin trust` as odin.yaml's settings do.
	Project bool
	// Tree holds the settings as a YAML decoder would give them.
	Tree map[string]any
}

// normalizeForeign checks and normalises the layers of one scope
// (project or not), highest precedence first.
func normalizeForeign(layers []ForeignLayer, project bool, baseDir, home string) (trees []map[string]any, labels []string, problems []Problem) {
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		if l.Project != project || len(l.Tree) == 0 {
			continue
		}
		n := &normalizer{source: l.Label, baseDir: baseDir, home: home}
		out, ok := n.node("", "", deepCopy(l.Tree), configType)
		problems = append(problems, n.problems...)
		if !ok {
			continue
		}
		trees = append(trees, out.(map[string]any))
		labels = append(labels, l.Label)
	}
	return trees, labels, problems
}

// MergeForeign folds trees (lowest precedence first) into one, as Load
// merges layers within a scope: maps merge key by key, lists add up
// without repeats, and the higher tree wins a scalar. The trees are not
// changed. `odin import` writes its odin.yaml from it.
func MergeForeign(trees []map[string]any) map[string]any {
	out := map[string]any{}
	labels := map[string]string{}
	for i := len(trees) - 1; i >= 0; i-- {
		mergeUnder(out, deepCopy(trees[i]).(map[string]any), "", "", labels)
	}
	return out
}

// mergeUnder adds src beneath dst: what dst sets wins, maps merge key by
// key and lists add up (dst's items first), so a user's hooks and
// permission lists from two files all apply. The leaves taken from src
// get label in labels.
func mergeUnder(dst, src map[string]any, prefix, label string, labels map[string]string) {
	for k, sv := range src {
		key := joinKey(prefix, k)
		dv, ok := dst[k]
		if !ok || dv == nil {
			dst[k] = sv
			leaves(key, sv, func(leaf string, _ any) { labels[leaf] = label })
			continue
		}
		switch d := dv.(type) {
		case map[string]any:
			if s, ok := sv.(map[string]any); ok {
				mergeUnder(d, s, key, label, labels)
			}
		case []string:
			if s, ok := sv.([]string); ok {
				for _, x := range s {
					if !slices.Contains(d, x) {
						d = append(d, x)
					}
				}
				dst[k] = d
			}
		case []any:
			if s, ok := sv.([]any); ok {
				for _, x := range s {
					if !slices.ContainsFunc(d, func(y any) bool { return reflect.DeepEqual(x, y) }) {
						d = append(d, x)
					}
				}
				dst[k] = d
			}
		}
	}
}

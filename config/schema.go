package config

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// The schema of odin.yaml is the Config type itself: the mapstructure tag
// of each field is its key. This file walks raw settings (YAML documents,
// environment strings, flag values) against that schema, so that every
// layer is checked on its own — an error can then name the file or
// variable it came from — and is normalised to the Go types the decoder
// expects (durations parsed, paths made absolute).

var durationType = reflect.TypeFor[time.Duration]()

// pathKeys are the templates ("*" for a map entry) of keys holding file
// system paths; relative values are taken against the directory of the
// file that sets them, and "~/" against the home directory.
var pathKeys = []string{"agents.*.prompt_file", "permissions.additional_dirs", "log.file", "store.path",
	"permissions.network.allow_unix_sockets", "agents.*.sandbox.allow_unix_sockets",
	"mcp.servers.*.writable"}

func isPathKey(tmpl string) bool { return slices.Contains(pathKeys, tmpl) }

// fieldsOf returns the keys of struct type t, in declaration order, and
// the field of each. Callers only read them: the answer for a type is
// built once per process and shared (loading the configuration walks the
// schema's types several times, once per layer).
func fieldsOf(t reflect.Type) ([]string, map[string]reflect.StructField) {
	if f, ok := schemaFields.Load(t); ok {
		sf := f.(structFields)
		return sf.names, sf.fields
	}
	var names []string
	fields := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if !f.IsExported() || tag == "" || tag == "-" {
			continue
		}
		names = append(names, tag)
		fields[tag] = f
	}
	names = slices.Clip(names) // an append by a caller copies
	schemaFields.Store(t, structFields{names: names, fields: fields})
	return names, fields
}

// structFields is fieldsOf's answer for one type.
type structFields struct {
	names  []string
	fields map[string]reflect.StructField
}

// schemaFields holds fieldsOf's answers by type.
var schemaFields sync.Map

func joinKey(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// normalizer checks one layer against the schema and converts it.
type normalizer struct {
	source   string // names the layer in problems
	text     bool   // scalar values are strings to parse (env, flags)
	baseDir  string // relative paths are taken against it
	home     string // "~" expands to it
	problems []Problem
}

func (n *normalizer) fail(key, format string, args ...any) {
	n.problems = append(n.problems, Problem{Source: n.source, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// node returns v converted to the shape of t, and false when v is null or
// wrong (a problem is then recorded). Null means "not set here".
func (n *normalizer) node(key, tmpl string, v any, t reflect.Type) (any, bool) {
	if v == nil {
		return nil, false
	}
	if t == durationType {
		return n.duration(key, v)
	}
	if t == sandboxModeType {
		return n.sandboxMode(key, v)
	}
	switch t.Kind() {
	case reflect.Pointer:
		// An optional setting (*bool): unset stays nil.
		return n.node(key, tmpl, v, t.Elem())
	case reflect.Struct:
		m, ok := n.mapping(key, v)
		if !ok {
			return nil, false
		}
		names, fields := fieldsOf(t)
		out := map[string]any{}
		for _, k := range sortedKeys(m) {
			f, ok := fields[k]
			if !ok {
				n.fail(joinKey(key, k), "unknown key%s", suggest(k, names))
				continue
			}
			if nv, ok := n.node(joinKey(key, k), joinKey(tmpl, k), m[k], f.Type); ok {
				out[k] = nv
			}
		}
		return out, true
	case reflect.Map:
		m, ok := n.mapping(key, v)
		if !ok {
			return nil, false
		}
		out := map[string]any{}
		for _, k := range sortedKeys(m) {
			if strings.TrimSpace(k) == "" {
				n.fail(key, "an entry has an empty name")
				continue
			}
			if nv, ok := n.node(joinKey(key, k), joinKey(tmpl, "*"), m[k], t.Elem()); ok {
				out[k] = nv
			}
		}
		return out, true
	case reflect.Slice:
		items, ok := n.list(key, v)
		if !ok {
			return nil, false
		}
		if t.Elem().Kind() == reflect.String {
			out := make([]string, 0, len(items))
			for i, it := range items {
				s, ok := it.(string)
				if !ok {
					n.fail(fmt.Sprintf("%s[%d]", key, i), "must be a string (got %s)", describe(it))
					continue
				}
				if isPathKey(tmpl) {
					if s, ok = n.path(fmt.Sprintf("%s[%d]", key, i), s); !ok {
						continue
					}
				}
				out = append(out, s)
			}
			return out, true
		}
		out := make([]any, 0, len(items))
		for i, it := range items {
			if nv, ok := n.node(fmt.Sprintf("%s[%d]", key, i), tmpl, it, t.Elem()); ok {
				out = append(out, nv)
			}
		}
		return out, true
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			n.fail(key, "must be a string (got %s)", describe(v))
			return nil, false
		}
		if isPathKey(tmpl) {
			return n.path(key, s)
		}
		return s, true
	case reflect.Int, reflect.Int64:
		i, ok := n.integer(key, v)
		if !ok {
			return nil, false
		}
		if t.Kind() == reflect.Int {
			return int(i), true
		}
		return i, true
	case reflect.Float64:
		return n.float(key, v)
	case reflect.Bool:
		switch b := v.(type) {
		case bool:
			return b, true
		case string:
			if n.text {
				if p, err := strconv.ParseBool(strings.TrimSpace(b)); err == nil {
					return p, true
				}
			}
		}
		n.fail(key, "must be true or false (got %s)", describe(v))
		return nil, false
	}
	// Only reachable if a field of an unsupported kind is added to Config;
	// the schema test walks every field, so this cannot ship.
	n.fail(key, "unsupported setting type %s", t)
	return nil, false
}

func (n *normalizer) mapping(key string, v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, sub := range m {
			out[fmt.Sprint(k)] = sub
		}
		return out, true
	}
	if key == "" {
		n.fail("", "the file must be a mapping of keys (got %s)", describe(v))
		return nil, false
	}
	n.fail(key, "must be a mapping of keys (got %s)", describe(v))
	return nil, false
}

// list accepts a YAML sequence, a []string (flags) or, from the
// environment, "a, b" or a YAML flow sequence `["go test *", "make"]`.
func (n *normalizer) list(key string, v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	case string:
		if !n.text {
			break
		}
		s := strings.TrimSpace(l)
		if strings.HasPrefix(s, "[") {
			var out []any
			if err := yaml.Unmarshal([]byte(s), &out); err != nil {
				n.fail(key, "invalid list %q: %v", l, err)
				return nil, false
			}
			return out, true
		}
		var out []any
		for part := range strings.SplitSeq(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out, true
	}
	n.fail(key, "must be a list (got %s)", describe(v))
	return nil, false
}

func (n *normalizer) integer(key string, v any) (int64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if rv.Uint() <= math.MaxInt64 {
			return int64(rv.Uint()), true
		}
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return int64(f), true
		}
	case reflect.String:
		if n.text {
			if i, err := strconv.ParseInt(strings.TrimSpace(rv.String()), 10, 64); err == nil {
				return i, true
			}
		}
	}
	n.fail(key, "must be a whole number (got %s)", describe(v))
	return 0, false
}

func (n *normalizer) float(key string, v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	case reflect.String:
		if n.text {
			if f, err := strconv.ParseFloat(strings.TrimSpace(rv.String()), 64); err == nil {
				return f, true
			}
		}
	}
	n.fail(key, "must be a number (got %s)", describe(v))
	return 0, false
}

// duration accepts Go duration strings ("90s", "2m", "1h30m") and whole
// numbers, which are seconds ("30" or 30), because that is what a bare
// number means in every tool users come from (hook timeouts in seconds).
func (n *normalizer) duration(key string, v any) (any, bool) {
	if d, ok := v.(time.Duration); ok {
		return d, true
	}
	var secs int64
	switch x := v.(type) {
	case string:
		s := strings.TrimSpace(x)
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			d, err := time.ParseDuration(s)
			if err != nil {
				n.fail(key, `invalid duration %q (write a number with a unit, such as "90s", "2m" or "1h30m", or whole seconds)`, x)
				return nil, false
			}
			return d, true
		}
		secs = i
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			secs = rv.Int()
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if rv.Uint() > math.MaxInt64 {
				n.fail(key, "invalid duration %v (too long)", v)
				return nil, false
			}
			secs = int64(rv.Uint())
		default:
			n.fail(key, `invalid duration %s (write a number with a unit, such as "90s", "2m" or "1h30m", or whole seconds)`, describe(v))
			return nil, false
		}
	}
	if secs > math.MaxInt64/int64(time.Second) || secs < math.MinInt64/int64(time.Second) {
		n.fail(key, "invalid duration %d (too long)", secs)
		return nil, false
	}
	return time.Duration(secs) * time.Second, true
}

// path expands "~/" and makes a relative path absolute against the
// directory of the file that set it, so the value means the same thing
// wherever Odin is started from.
func (n *normalizer) path(key, p string) (string, bool) {
	if p == "" {
		return "", true
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if n.home == "" {
			n.fail(key, "cannot expand %q: HOME is not set", p)
			return "", false
		}
		p = filepath.Join(n.home, strings.TrimPrefix(p, "~"))
	}
	if !filepath.IsAbs(p) && n.baseDir != "" {
		p = filepath.Join(n.baseDir, p)
	}
	return filepath.Clean(p), true
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return strconv.Quote(x)
	case map[string]any, map[any]any:
		return "a mapping"
	case []any, []string:
		return "a list"
	}
	return fmt.Sprint(v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// suggest returns ` (did you mean "x"?)` for the closest of names within
// two edits (case ignored), else the list of valid names.
func suggest(k string, names []string) string {
	if s := closest(k, names); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return " (valid keys: " + strings.Join(names, ", ") + ")"
}

func closest(k string, names []string) string {
	best, bestDist := "", 3
	lk := strings.ToLower(k)
	for _, name := range names {
		d := editDistance(lk, strings.ToLower(name))
		if d < bestDist && d < max(len([]rune(k)), 1) {
			best, bestDist = name, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent runes ("mian" is
// one edit from "main").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// resolveKey finds a dotted key ("models.main", "model_info.gpt-4.1.price.input")
// in the schema of t. Map entry names may contain dots, so at a map the
// shortest name after which the rest of the key resolves is taken. It
// returns the key's parts, its template ("*" for map entries) and type, or
// the offending key and a message.
func resolveKey(segs []string, t reflect.Type, prefix string) (parts, tmpl []string, typ reflect.Type, badKey, msg string) {
	if len(segs) == 0 {
		return nil, nil, t, "", ""
	}
	switch {
	case t.Kind() == reflect.Struct && t != durationType:
		names, fields := fieldsOf(t)
		f, ok := fields[segs[0]]
		if !ok {
			return nil, nil, nil, joinKey(prefix, segs[0]), "unknown key" + suggest(segs[0], names)
		}
		p, tm, typ, bad, msg := resolveKey(segs[1:], f.Type, joinKey(prefix, segs[0]))
		if bad != "" {
			return nil, nil, nil, bad, msg
		}
		return append([]string{segs[0]}, p...), append([]string{segs[0]}, tm...), typ, "", ""
	case t.Kind() == reflect.Map:
		var firstBad, firstMsg string
		for i := 1; i <= len(segs); i++ {
			name := strings.Join(segs[:i], ".")
			p, tm, typ, bad, msg := resolveKey(segs[i:], t.Elem(), joinKey(prefix, name))
			if bad == "" {
				return append([]string{name}, p...), append([]string{"*"}, tm...), typ, "", ""
			}
			if i == 1 {
				firstBad, firstMsg = bad, msg
			}
		}
		return nil, nil, nil, firstBad, firstMsg
	}
	return nil, nil, nil, joinKey(prefix, segs[0]), fmt.Sprintf("unknown key (%s has no keys below it)", prefix)
}

// toTree converts a typed value (the defaults) to the raw shape the
// normaliser produces, so it can be merged as the lowest layer.
func toTree(v reflect.Value) any {
	if v.Type() == durationType {
		return time.Duration(v.Int())
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return toTree(v.Elem())
	case reflect.Struct:
		names, fields := fieldsOf(v.Type())
		out := map[string]any{}
		for _, name := range names {
			if sub := toTree(v.FieldByIndex(fields[name].Index)); sub != nil {
				out[name] = sub
			}
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := map[string]any{}
		iter := v.MapRange()
		for iter.Next() {
			out[iter.Key().String()] = toTree(iter.Value())
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.String {
			return slices.Clone(v.Interface().([]string))
		}
		out := make([]any, v.Len())
		for i := range v.Len() {
			out[i] = toTree(v.Index(i))
		}
		return out
	case reflect.String:
		return v.String()
	case reflect.Int:
		return int(v.Int())
	case reflect.Int64:
		return v.Int()
	case reflect.Float64:
		return v.Float()
	case reflect.Bool:
		return v.Bool()
	}
	return nil
}

// leaves calls fn for every leaf of a raw tree (lists are leaves) with its
// dotted key.
func leaves(prefix string, v any, fn func(key string, v any)) {
	m, ok := v.(map[string]any)
	if !ok {
		fn(prefix, v)
		return
	}
	for k, sub := range m {
		leaves(joinKey(prefix, k), sub, fn)
	}
}

// at returns the raw value at parts in tree, or nil.
func at(tree map[string]any, parts ...string) any {
	var cur any = tree
	for _, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// set stores v at parts in tree, creating the maps on the way.
func set(tree map[string]any, parts []string, v any) {
	for _, p := range parts[:len(parts)-1] {
		next, ok := tree[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			tree[p] = next
		}
		tree = next
	}
	tree[parts[len(parts)-1]] = v
}

// del removes parts from tree and reports whether it was there.
func del(tree map[string]any, parts ...string) bool {
	parent, ok := at(tree, parts[:len(parts)-1]...).(map[string]any)
	if !ok {
		return false
	}
	if _, ok := parent[parts[len(parts)-1]]; !ok {
		return false
	}
	delete(parent, parts[len(parts)-1])
	return true
}

// deepCopy copies the maps and lists of a raw tree; viper lowercases the
// keys of what it is given in place, and the layers must keep theirs.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, sub := range x {
			out[k] = deepCopy(sub)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, sub := range x {
			out[i] = deepCopy(sub)
		}
		return out
	case []string:
		return slices.Clone(x)
	}
	return v
}

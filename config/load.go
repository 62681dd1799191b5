package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/odin-code/odin/internal/dotkey"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// FileName is the name of the config file, in the user directory and at
// the project root.
const FileName = "odin.yaml"

// keyDelim separates key parts inside viper. It is not "." because map
// entry names contain dots ("gpt-4.1") and viper splits keys on its
// delimiter.
const keyDelim = "\x1f"

var configType = reflect.TypeFor[Config]()

// LoadOptions says where Load finds each layer.
type LoadOptions struct {
	// Root is the project root; <Root>/odin.yaml is the project file.
	// Empty: no project file.
	Root string
	// UserDir holds the user file <UserDir>/odin.yaml. Empty: UserDir(LookupEnv).
	UserDir string
	// LookupEnv reads ODIN_*, OPENAI_BASE_URL, HOME and XDG_* now, and the
	// providers' API keys later (it becomes Config.Env). Nil: os.LookupEnv.
	LookupEnv EnvFunc
	// Environ lists the environment (os.Environ), when it can be listed:
	// without an ODIN_ variable in it, no key is looked up one by one.
	// Nil: every key's variable is looked up.
	Environ func() []string
	// Flags override everything, by dotted key ("models.main", "mode",
	// "permissions.allowed_commands", "providers.local.base_url"). Values
	// are Go values (string, int, float64, bool, time.Duration, []string)
	// or strings, parsed as environment values are.
	Flags map[string]any
	// IgnoreProjectWidening drops the project file's widening keys (see
	// Sources.ProjectWidens) — used until the user trusts the project.
	// Sources.Dropped lists what was dropped.
	IgnoreProjectWidening bool
	// Skip lists config files (absolute paths: the user's or the
	// project's odin.yaml, a .mcp.json) to treat as absent, so that
	// `odin doctor` can check everything else when one does not load.
	Skip []string
	// Foreign are the settings of other agents' files, lowest precedence
	// first: the user's sit beneath the user's odin.yaml, the project's
	// beneath the project's odin.yaml (and wait for trust with it). Within
	// a scope maps merge, lists add up and the higher file wins a scalar.
	Foreign []ForeignLayer
}

// Sources reports where the configuration came from. Its methods are safe
// on a nil *Sources.
type Sources struct {
	// UserFile and ProjectFile are the paths of the files read; empty when
	// there was none.
	UserFile    string
	ProjectFile string
	// Env lists the environment variables that set keys (ODIN_* and
	// OPENAI_BASE_URL), sorted.
	Env []string
	// Flags lists the dotted keys set by LoadOptions.Flags, sorted.
	Flags []string
	// Dropped lists the project keys ignored because of
	// LoadOptions.IgnoreProjectWidening, sorted.
	Dropped []string

	origins map[string]origin
	trust   []TrustItem
}

// origin is the layer a leaf key's value came from; rank orders layers
// by precedence.
type origin struct {
	label string
	rank  int
}

const labelDefault = "default"

// Files lists the config files read, lowest precedence first.
func (s *Sources) Files() []string {
	if s == nil {
		return nil
	}
	var files []string
	for _, f := range []string{s.UserFile, s.ProjectFile} {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// Origin names where key's value came from: "default", a config file
// ("odin.yaml" for the project's, the full path for the user's),
// "env ODIN_MODE" or "flags". For a section ("agents.code") it is the
// highest-precedence source of any key below it; for a list item
// ("hooks.Stop[0].command") that of the list. Unknown keys give "".
func (s *Sources) Origin(key string) string {
	if s == nil {
		return ""
	}
	// A list item ("hooks.Stop[0].command") comes from where its list does.
	if i := strings.IndexByte(key, '['); i >= 0 {
		key = key[:i]
	}
	if o, ok := s.origins[key]; ok {
		return o.label
	}
	best := origin{rank: -1}
	for k, o := range s.origins {
		if strings.HasPrefix(k, key+".") && o.rank > best.rank {
			best = o
		}
	}
	if best.rank >= 0 {
		return best.label
	}
	// Else the nearest enclosing key a layer set.
	if o, ok := dotkey.Lookup(s.origins, key); ok {
		return o.label
	}
	return ""
}

// ProjectWidens lists the keys of TrustItems, sorted.
func (s *Sources) ProjectWidens() []string {
	if s == nil {
		return nil
	}
	keys := make([]string, 0, len(s.trust))
	for _, it := range s.trust {
		keys = append(keys, it.Key)
	}
	if len(keys) == 0 {
		return nil
	}
	return keys
}

// TrustItems lists the settings of the project's odin.yaml that wait for
// `odin trust` (see widening for the rule), with their values, whether or
// not they were dropped. Keys with empty values need no trust. Sorted by
// key.
func (s *Sources) TrustItems() []TrustItem {
	if s == nil {
		return nil
	}
	return slices.Clone(s.trust)
}

// WideningFingerprint is TrustFingerprint of TrustItems: "" when there are
// none. A trust decision recorded against it is void once the project
// changes any of them.
func (s *Sources) WideningFingerprint() string {
	if s == nil {
		return ""
	}
	return TrustFingerprint(s.trust)
}

// layer is one normalised source of settings.
type layer struct {
	label   string            // names the source in origins and errors
	project bool              // the project's files (odin.yaml, .mcp.json)
	labels  map[string]string // per-key labels (the env layer)
	tree    map[string]any
}

// Load builds the configuration from, lowest precedence first: built-in
// defaults, $OPENAI_BASE_URL (as the default of providers.openai.base_url),
// the user file, the project file, ODIN_* variables and flags. Mappings
// merge key by key; lists and scalars replace. It then validates the
// result.
//
// Every problem is reported at once in an *Error (errors.Is ErrInvalid),
// each naming its source and key, e.g.
//
//	odin.yaml: models.mian: unknown key (did you mean "main"?)
//	odin.yaml:3: yaml: mapping values are not allowed in this context
//
// Unknown keys are errors. Durations are Go durations ("90s", "2m",
// "1h30m") or whole seconds. ODIN_* variables are the dotted keys in upper
// case with "_" for "." and for any other character that is not a letter
// or digit (ODIN_MODELS_MAIN, ODIN_PROVIDERS_OPENAI_BASE_URL,
// ODIN_MODEL_INFO_GPT_4O_PRICE_INPUT); they reach keys of map entries that
// a lower layer defines, not new entries, and not hooks. Lists from the
// environment are comma-separated or a YAML flow list (["a, b", "c"]).
// An empty variable counts as unset.
//
// On error the *Config is nil and *Sources reports what was read. A
// problem in the project's odin.yaml or .mcp.json names the file by its
// path as DisplayPath gives it ("odin.yaml" when run in the project,
// "/p/odin.yaml" with -C /p), the user's file by its full path.
func Load(opts LoadOptions) (*Config, *Sources, error) {
	cfg, src, err := load(opts)
	var ce *Error
	if opts.Root != "" && errors.As(err, &ce) {
		for i, p := range ce.Problems {
			if p.Source == FileName || p.Source == ClaudeProjectFile {
				ce.Problems[i].Source = DisplayPath(filepath.Join(opts.Root, p.Source))
			}
		}
	}
	return cfg, src, err
}

// DisplayPath is path as a message shows it: relative to the current
// directory when that is shorter, else absolute.
func DisplayPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && len(rel) < len(abs) {
		return rel
	}
	return abs
}

func load(opts LoadOptions) (*Config, *Sources, error) {
	env := opts.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	home := env.lookup("HOME")
	src := &Sources{origins: map[string]origin{}}
	var problems []Problem
	var layers []layer
	fileLines := map[string]map[string]keyPos{} // a file's label → where its keys are written

	defaults := toTree(reflect.ValueOf(Default()).Elem()).(map[string]any)

	// A user who exports OPENAI_BASE_URL=http://localhost:11434/v1 expects
	// Ollama: the variable replaces the built-in provider's default
	// base_url, but anything written down (a file, ODIN_*, a flag) wins.
	if u := env.lookup("OPENAI_BASE_URL"); u != "" {
		layers = append(layers, layer{label: "env OPENAI_BASE_URL", tree: map[string]any{
			"providers": map[string]any{DefaultProvider: map[string]any{"base_url": u}},
		}})
		src.Env = append(src.Env, "OPENAI_BASE_URL")
	}

	userDir := opts.UserDir
	if userDir == "" {
		userDir = UserDir(env)
	}
	// Files in opts.Skip read as absent.
	readYAML := func(path, label, baseDir, home string) (map[string]any, bool, []Problem, map[string]keyPos) {
		if slices.Contains(opts.Skip, path) {
			return nil, false, nil, nil
		}
		return readFile(path, label, baseDir, home)
	}
	readMCP := func(path, baseDir, home string) (map[string]any, bool, []Problem) {
		if slices.Contains(opts.Skip, path) {
			return nil, false, nil
		}
		return readClaudeMCP(path, baseDir, home)
	}
	if home != "" {
		// Claude Code's user-scope servers, read as they are: the user's
		// own file, so as trusted as the user's odin.yaml.
		path := filepath.Join(home, ClaudeUserFile)
		tree, found, p := readMCP(path, home, home)
		problems = append(problems, p...)
		if found {
			layers = append(layers, layer{label: path, tree: tree})
		}
	}
	if userDir != "" {
		path := filepath.Join(userDir, FileName)
		tree, found, p, lines := readYAML(path, path, userDir, home)
		problems = append(problems, p...)
		fileLines[path] = lines
		if found {
			src.UserFile = path
		}
		ftrees, flabels, p := normalizeForeign(opts.Foreign, false, home, home)
		problems = append(problems, p...)
		if tree == nil && len(ftrees) > 0 {
			tree = map[string]any{}
		}
		labels := map[string]string{}
		for i, ft := range ftrees {
			mergeUnder(tree, ft, "", flabels[i], labels)
		}
		if tree != nil {
			layers = append(layers, layer{label: path, labels: labels, tree: tree})
		}
	}

	if opts.Root != "" {
		path := filepath.Join(opts.Root, FileName)
		tree, found, p, lines := readYAML(path, FileName, opts.Root, home)
		problems = append(problems, p...)
		fileLines[FileName] = lines
		// The project's .mcp.json joins the project layer, so its servers
		// wait for trust like odin.yaml's; odin.yaml wins on a name clash.
		mcpTree, mcpFound, p := readMCP(filepath.Join(opts.Root, ClaudeProjectFile), opts.Root, home)
		problems = append(problems, p...)
		yamlFound := found
		var labels map[string]string
		if mcpFound {
			if tree == nil {
				tree = map[string]any{}
			}
			// Problems in those entries name .mcp.json, not odin.yaml.
			labels = map[string]string{}
			for _, name := range mergeMissing(tree, mcpTree) {
				leaves("mcp.servers."+name, at(tree, "mcp", "servers", name), func(k string, _ any) { labels[k] = ClaudeProjectFile })
			}
			found = true
		}
		ftrees, flabels, p := normalizeForeign(opts.Foreign, true, opts.Root, home)
		problems = append(problems, p...)
		for i, ft := range ftrees {
			if tree == nil {
				tree = map[string]any{}
			}
			if labels == nil {
				labels = map[string]string{}
			}
			mergeUnder(tree, ft, "", flabels[i], labels)
			found = true
		}
		if found {
			if yamlFound {
				src.ProjectFile = path
			}
			if nonEmpty(at(tree, "store", "url")) {
				problems = append(problems, Problem{Source: FileName, Key: "store.url",
					Msg: "a project may not choose the session store; set it in your own odin.yaml, ODIN_STORE_URL or odin serve --store"})
			}
			lower := []map[string]any{defaults}
			for _, l := range layers {
				lower = append(lower, l.tree)
			}
			src.trust = widening(tree, lower, opts.Root)
			if opts.IgnoreProjectWidening {
				for _, it := range src.trust {
					if del(tree, it.parts...) {
						src.Dropped = append(src.Dropped, it.Key)
					}
				}
			}
			layers = append(layers, layer{label: FileName, labels: labels, tree: tree, project: true})
		}
	}

	trees := []map[string]any{defaults}
	for _, l := range layers {
		trees = append(trees, l.tree)
	}
	envL, envVars, p := envLayer(env, opts.Environ, trees, opts.Root, home)
	problems = append(problems, p...)
	layers = append(layers, envL)
	src.Env = append(src.Env, envVars...)

	flagL, flagKeys, p := flagLayer(opts.Flags, opts.Root, home)
	problems = append(problems, p...)
	layers = append(layers, flagL)
	src.Flags = flagKeys

	slices.Sort(src.Env)
	if len(problems) > 0 {
		placeProblems(problems, fileLines)
		return nil, src, &Error{Problems: problems}
	}

	addEntryDefaults(defaults, layers)
	layers = append([]layer{{label: labelDefault, tree: defaults}}, layers...)
	for rank, l := range layers {
		leaves("", l.tree, func(key string, _ any) {
			label := l.label
			if pl, ok := l.labels[key]; ok {
				label = pl
			}
			src.origins[key] = origin{label: label, rank: rank}
		})
	}

	cfg, err := decode(layers)
	if err != nil {
		return nil, src, err
	}
	cfg.Env = env
	// Forbidden commands accumulate across layers: a later layer (above
	// all an untrusted project) may add to the list but never lift what a
	// lower one forbids.
	cfg.Permissions.ForbiddenCommands = forbiddenUnion(layers)
	// The read deny list too: the user's layers add up, and the project's
	// patterns are kept apart so that they can only add (readdeny drops
	// their "!" lines).
	cfg.Permissions.DenyRead = listUnion(layers, false, "permissions", "deny_read")
	cfg.Permissions.ProjectDenyRead = listUnion(layers, true, "permissions", "deny_read")
	cfg.Web.DenyHosts = append(listUnion(layers, false, "web", "deny_hosts"), listUnion(layers, true, "web", "deny_hosts")...)
	cfg.MCP.DenyTools = append(listUnion(layers, false, "mcp", "deny_tools"), listUnion(layers, true, "mcp", "deny_tools")...)
	for event, hooks := range cfg.Hooks {
		for i := range hooks {
			if hooks[i].Timeout == 0 {
				cfg.Hooks[event][i].Timeout = DefaultHookTimeout
			}
		}
	}
	if state := StateDir(env); state != "" {
		if cfg.Log.File == "" {
			cfg.Log.File = filepath.Join(state, "odin.log")
		}
		if cfg.Store.Path == "" {
			cfg.Store.Path = filepath.Join(state, "odin.db")
		}
	}

	if err := cfg.Validate(); err != nil {
		var ve *Error
		if !errors.As(err, &ve) {
			return nil, src, err
		}
		for i, p := range ve.Problems {
			if p.Source != "" {
				continue
			}
			// A key the project set and Odin dropped is the project's
			// problem, though its value now comes from a lower layer.
			if slices.ContainsFunc(src.Dropped, func(d string) bool { return p.Key == d || strings.HasPrefix(p.Key, d+".") }) {
				ve.Problems[i].Source = FileName
			} else if o := valueOrigin(src, p.Key); o != "" {
				ve.Problems[i].Source = o
			}
		}
		placeProblems(ve.Problems, fileLines)
		if len(src.Dropped) > 0 {
			ve.Problems = append(ve.Problems, Problem{Source: FileName, Msg: "ignored until the project is trusted: " +
				strings.Join(src.Dropped, ", ")})
		}
		return nil, src, ve
	}
	return cfg, src, nil
}

// valueOrigin is the source to blame for a problem with key, whose value
// is a built-in default (a custom agent's description left out): the
// file that made the nearest enclosing entry a file set (the agent's), so
// that the problem names the file and line that defined what lacks it.
// Empty when only the defaults speak for it.
func valueOrigin(src *Sources, key string) string {
	for k := range dotkey.Enclosing(key) {
		if o := src.definer(k); o != "" {
			return o
		}
	}
	return ""
}

// definer is the lowest layer but the defaults that set key or a key
// under it: the file that made an entry (a custom agent), where Origin
// names the highest, which may only add to it (a project's max_turns for
// an agent the user's file defines).
func (s *Sources) definer(key string) string {
	best := origin{rank: math.MaxInt}
	for k, o := range s.origins {
		if (k == key || strings.HasPrefix(k, key+".")) && o.label != labelDefault && o.rank < best.rank {
			best = o
		}
	}
	return best.label
}

// decode merges the layers in viper and decodes the result strictly. The
// layers were checked already, so an error here is a bug, not bad input.
func decode(layers []layer) (*Config, error) {
	v := viper.NewWithOptions(viper.KeyDelimiter(keyDelim))
	for _, l := range layers {
		if err := v.MergeConfigMap(deepCopy(l.tree).(map[string]any)); err != nil {
			return nil, fmt.Errorf("config: merge %s: %w", l.label, err)
		}
	}
	var cfg Config
	strict := func(dc *mapstructure.DecoderConfig) { dc.WeaklyTypedInput = false }
	if err := v.UnmarshalExact(&cfg, strict); err != nil {
		return nil, fmt.Errorf("config: decode merged settings: %w", err)
	}
	trees := make([]any, len(layers))
	for i, l := range layers {
		trees[i] = l.tree
	}
	// viper lowercases every key; names of providers, models and hook
	// events are case-sensitive, so their spelling is taken back from the
	// layers (the highest layer's spelling wins).
	restoreCase(reflect.ValueOf(&cfg).Elem(), trees)
	return &cfg, nil
}

// readFile reads and normalises one config file. found is false when the
// file does not exist.
func readFile(path, label, baseDir, home string) (tree map[string]any, found bool, problems []Problem, lines map[string]keyPos) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil, nil
	}
	if err != nil {
		return nil, false, []Problem{{Source: label, Msg: "cannot read: " + err.Error()}}, nil
	}
	var raw any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		if line := tabIndentedLine(data); line > 0 {
			// YAML's own words ("found character that cannot start any
			// token") do not say that the character is a tab.
			return nil, false, []Problem{{Source: label, Line: line, Msg: "a tab indents this line; YAML indents with spaces only (replace the tab with spaces)"}}, nil
		}
		problems := YAMLErrors(data, err)
		for i := range problems {
			problems[i].Source = label
		}
		return nil, false, problems, nil
	}
	if line := secondDocumentLine(data); line > 0 {
		return nil, false, []Problem{{Source: label, Line: line, Msg: "a second YAML document (after ---): the file holds one; merge its keys into the first"}}, nil
	}
	if raw == nil {
		return map[string]any{}, true, nil, nil
	}
	// A wrong value is reported at its key, and the key at its line.
	lines = keyPositions(data)
	n := &normalizer{source: label, baseDir: baseDir, home: home}
	out, ok := n.node("", "", raw, configType)
	if !ok {
		return nil, false, n.problems, lines
	}
	return out.(map[string]any), true, n.problems, lines
}

// tabIndentedLine is the first line (1-based) whose indentation holds a
// tab, or 0.
func tabIndentedLine(data []byte) int {
	for i, l := range strings.Split(string(data), "\n") {
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if strings.Contains(indent, "\t") && strings.TrimSpace(l) != "" {
			return i + 1
		}
	}
	return 0
}

// envKey is one ODIN_* variable and the key it sets.
type envKey struct {
	name  string
	parts []string
	tmpl  string
	typ   reflect.Type
}

// envKeys lists the variables that can set keys: every scalar and string
// list of the schema, for the map entries the given trees define. With
// want set, only the variables it accepts are listed (the walk then builds
// no key for the hundreds of variables that are not set).
func envKeys(trees []map[string]any, want func(name string) bool) []envKey {
	var keys []envKey
	// parts and tmpl are the walk's path, shared by its levels: a key
	// that is listed gets its own copy.
	var parts, tmpl []string
	var walk func(t reflect.Type, name string)
	walk = func(t reflect.Type, name string) {
		depth := len(parts)
		defer func() { parts, tmpl = parts[:depth], tmpl[:depth] }()
		switch {
		case t == durationType:
		case t.Kind() == reflect.Struct:
			names, fields := fieldsOf(t)
			for _, field := range names {
				parts, tmpl = append(parts[:depth], field), append(tmpl[:depth], field)
				walk(fields[field].Type, envChild(name, field))
			}
			return
		case t.Kind() == reflect.Map:
			if t.Elem().Kind() != reflect.Struct {
				return // headers: names are not enumerable
			}
			seen := map[string]bool{}
			for _, tree := range trees {
				m, _ := at(tree, parts[:depth]...).(map[string]any)
				for _, entry := range sortedKeys(m) {
					if !seen[entry] {
						seen[entry] = true
						parts, tmpl = append(parts[:depth], entry), append(tmpl[:depth], "*")
						walk(t.Elem(), envChild(name, entry))
					}
				}
			}
			return
		case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.String:
			return // lists of hooks cannot be written as one string
		}
		if want == nil || want(name) {
			keys = append(keys, envKey{name: name, parts: slices.Clone(parts), tmpl: strings.Join(tmpl, "."), typ: t})
		}
	}
	walk(configType, "ODIN")
	return keys
}

// envChild is the variable name of part under the variable name prefix:
// a key's variable is ODIN_ and its parts in upper case, joined by "_",
// with every character that is not a letter or digit as "_".
func envChild(prefix, part string) string {
	b := append(make([]byte, 0, len(prefix)+1+len(part)), prefix...)
	b = append(b, '_')
	for _, r := range strings.ToUpper(part) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

func envLayer(env EnvFunc, environ func() []string, trees []map[string]any, root, home string) (layer, []string, []Problem) {
	l := layer{label: "env", labels: map[string]string{}, tree: map[string]any{}}
	var vars []string
	var problems []Problem
	var want func(string) bool
	if environ != nil {
		// Only the ODIN_ variables set can set keys: with none there is
		// nothing to find, and otherwise the walk of the schema lists
		// only theirs (a variable such as ODIN_TEST_BIN_DIR that names no
		// key then costs a walk, not hundreds of keys and lookups).
		set := map[string]bool{}
		for _, kv := range environ() {
			if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "ODIN_") {
				set[name] = true
			}
		}
		if len(set) == 0 {
			return l, nil, nil
		}
		want = func(name string) bool { return set[name] }
	}
	for _, k := range envKeys(trees, want) {
		val := env.lookup(k.name)
		if val == "" {
			continue
		}
		key := strings.Join(k.parts, ".")
		n := &normalizer{source: "env " + k.name, text: true, baseDir: root, home: home}
		if nv, ok := n.node(key, k.tmpl, val, k.typ); ok {
			set(l.tree, k.parts, nv)
			l.labels[key] = "env " + k.name
			vars = append(vars, k.name)
		}
		problems = append(problems, n.problems...)
	}
	return l, vars, problems
}

func flagLayer(flags map[string]any, root, home string) (layer, []string, []Problem) {
	l := layer{label: "flags", tree: map[string]any{}}
	var keys []string
	var problems []Problem
	for _, key := range sortedKeys(flags) {
		if flags[key] == nil {
			continue
		}
		parts, tmpl, typ, bad, msg := resolveKey(strings.Split(key, "."), configType, "")
		if bad != "" {
			problems = append(problems, Problem{Source: "flags", Key: bad, Msg: msg})
			continue
		}
		n := &normalizer{source: "flags", text: true, baseDir: root, home: home}
		if nv, ok := n.node(strings.Join(parts, "."), strings.Join(tmpl, "."), flags[key], typ); ok {
			set(l.tree, parts, nv)
			keys = append(keys, key)
		}
		problems = append(problems, n.problems...)
	}
	return l, keys, problems
}

// addEntryDefaults gives every provider and model_info entry named in any
// layer its per-entry defaults, beneath everything else.
func addEntryDefaults(defaults map[string]any, layers []layer) {
	provider, info := entryDefaults()
	for section, def := range map[string]any{"providers": provider, "model_info": info} {
		for _, l := range layers {
			m, _ := l.tree[section].(map[string]any)
			for name := range m {
				if at(defaults, section, name) == nil {
					set(defaults, []string{section, name}, toTree(reflect.ValueOf(def)))
				}
			}
		}
	}
}

// restoreCase walks a decoded struct and renames the entries of its maps
// to their spelling in the raw trees.
func restoreCase(v reflect.Value, trees []any) {
	names, fields := fieldsOf(v.Type())
	for _, name := range names {
		f := v.FieldByIndex(fields[name].Index)
		var sub []any
		for _, t := range trees {
			if m, ok := t.(map[string]any); ok && m[name] != nil {
				sub = append(sub, m[name])
			}
		}
		switch {
		case f.Kind() == reflect.Struct && f.Type() != durationType:
			restoreCase(f, sub)
		case f.Kind() == reflect.Map && !f.IsNil():
			spelled := map[string]string{}
			for _, t := range sub {
				if m, ok := t.(map[string]any); ok {
					for k := range m {
						spelled[strings.ToLower(k)] = k
					}
				}
			}
			out := reflect.MakeMapWithSize(f.Type(), f.Len())
			iter := f.MapRange()
			for iter.Next() {
				name := iter.Key().String()
				if orig, ok := spelled[strings.ToLower(name)]; ok {
					name = orig
				}
				elem := iter.Value()
				if elem.Kind() == reflect.Struct {
					cp := reflect.New(elem.Type()).Elem()
					cp.Set(elem)
					var entries []any
					for _, t := range sub {
						if m, ok := t.(map[string]any); ok {
							for k, e := range m {
								if strings.EqualFold(k, name) {
									entries = append(entries, e)
								}
							}
						}
					}
					restoreCase(cp, entries)
					elem = cp
				}
				out.SetMapIndex(reflect.ValueOf(name).Convert(f.Type().Key()), elem)
			}
			f.Set(out)
		}
	}
}

// widening is the trust rule for odin.yaml: it finds the settings of the
// project file that wait for `odin trust` — every value that can run code,
// send data or a key somewhere, change the model endpoint, loosen the mode
// or replace a built-in agent — with their values. lower are the layers
// beneath the project file. Which keys are gated, and by which rule, is
// the schema's table trustRules (trustkeys.go); each gated key belongs to
// one of two classes:
//
//   - needs trust when the project sets it (commands, directories, hosts,
//     unix sockets, hooks, files Odin writes, QA checks, web search);
//   - needs trust when it widens what the lower layers chose: a provider
//     endpoint, key variable or headers that differ (any change of where
//     the conversation or a key goes), a provider or model that resolves
//     to a different provider, a mode less restrictive than the user's, the
//     sandbox turned off, a built-in agent's prompt, tools or disabling
//     changed, any agent on a model other than main/small, a custom agent
//     with a prompt file outside the root, quality.risk_paths or
//     quality.public_api without an entry of the lower layers' list (a
//     change there would skip the mandatory review).
//
// Keys with empty values do not widen. The items are sorted by key.
func widening(project map[string]any, lower []map[string]any, root string) []TrustItem {
	items := trustItems(project, lower, root)
	slices.SortFunc(items, func(a, b TrustItem) int { return strings.Compare(a.Key, b.Key) })
	return items
}

// modeRank orders modes from most to least restrictive; an unknown mode
// ranks lowest (validation rejects it).
func modeRank(m string) int { return slices.Index(Modes(), m) }

func nonEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case []string:
		return len(x) > 0
	case []any:
		return len(x) > 0
	case map[string]any:
		// A section of empty values ("search: {kind: \"\"}") sets nothing.
		for _, sub := range x {
			if nonEmpty(sub) {
				return true
			}
		}
		return false
	}
	return true
}

// within reports whether path, with symlinks resolved as far as it
// exists, lies inside root (component-wise).
func within(root, path string) bool {
	rel, err := filepath.Rel(resolveExisting(root), resolveExisting(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// an absolute path and appends the rest, so a file that does not exist yet
// is judged by where it would land.
func resolveExisting(path string) string {
	path = filepath.Clean(path)
	var rest []string
	for cur := path; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// listUnion collects the string list at key from the project's layers
// (project) or from every other layer, in layer order, without
// duplicates.
func listUnion(layers []layer, project bool, key ...string) []string {
	var out []string
	for _, l := range layers {
		if l.project != project {
			continue
		}
		var strs []string
		switch v := at(l.tree, key...).(type) {
		case []string:
			strs = v
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					strs = append(strs, s)
				}
			}
		}
		for _, s := range strs {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// forbiddenUnion collects permissions.forbidden_commands from every layer,
// in layer order, without duplicates.
func forbiddenUnion(layers []layer) []string {
	var out []string
	for _, l := range layers {
		list, _ := at(l.tree, "permissions", "forbidden_commands").([]any)
		for _, v := range list {
			if s, ok := v.(string); ok && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		if strs, ok := at(l.tree, "permissions", "forbidden_commands").([]string); ok {
			for _, s := range strs {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

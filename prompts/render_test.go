package prompts

import (
	"bytes"
	"strings"
	"testing"
	"text/template"
)

// Every template renders to the same text with the executor as with
// text/template, for data that sets and clears every field.
func TestExecutorMatchesTextTemplate(t *testing.T) {
	ref := template.Must(template.New("").Funcs(template.FuncMap{"trim": strings.TrimSpace}).ParseFS(files, "templates/*.tmpl"))
	var variants []Data
	for _, mode := range []string{"ask", "plan", "edit"} {
		full := sample(mode)
		full.WebSearch = true
		variants = append(variants, full, Data{Root: "/r", Date: "2026-11-24", OS: "linux/arm64", Mode: mode},
			Data{Root: "/r", Mode: mode, Agents: []Agent{{Name: "only", ReadOnly: true}}, WriteScope: "docs/**", Instructions: "  x  "})
	}
	names := Names()
	if len(names) < 10 {
		t.Fatalf("Names() = %v", names)
	}
	for _, name := range names {
		for i, d := range variants {
			var want bytes.Buffer
			if err := ref.ExecuteTemplate(&want, name+".tmpl", d); err != nil {
				t.Fatalf("text/template %s: %v", name, err)
			}
			got, err := Render(name, d)
			if err != nil {
				t.Fatalf("Render(%s, variant %d): %v", name, i, err)
			}
			if w := strings.TrimSpace(want.String()) + "\n"; got != w {
				t.Errorf("%s, variant %d: executor and text/template differ\n--- executor\n%s\n--- text/template\n%s", name, i, got, w)
			}
		}
	}
}

// What the executor does not know is an error, not a silent empty string.
func TestExecutorRefusesTheUnknown(t *testing.T) {
	for _, text := range []string{
		`{{.Root | printf "%s"}}`,
		`{{.NoSuchField}}`,
		`{{$x}}`,
		`{{range .Root}}x{{end}}`,
		`{{with .Root}}x{{end}}`,
		`{{template "missing" .}}`,
		`{{printf "%s" .Root}}`,
	} {
		s, err := parseSet(map[string]string{"t": text})
		if err != nil {
			continue // the parser already refuses it
		}
		if out, err := s.execute("t", sample("edit")); err == nil {
			t.Errorf("%s rendered %q, want an error", text, out)
		}
	}
}

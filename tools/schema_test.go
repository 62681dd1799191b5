package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/tools/tool"
)

var updateGolden = flag.Bool("update", false, "rewrite schemas.json from the built-in tools' input types")

// schemasGolden is both the golden file and the schemas the built-in tools
// ship (schemas.go embeds it).
const schemasGolden = "schemas.json"

// builtinForTest is every built-in tool, WebFetch included.
func builtinForTest(t *testing.T) Set {
	t.Helper()
	f, err := web.NewFetcher(config.Web{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	b, err := browser.NewPool(config.Web{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return Builtin(BuiltinOptions{Fetcher: f, Browsers: b})
}

// TestSchemasGolden pins every built-in tool's name, class and JSON schema
// as derived from its input type: a schema is a prompt, so any change to
// it must be a reviewed diff of the golden file (go test ./tools -run
// Schema -update rewrites it). The tools send that file's schemas, so it
// also checks that what a model sees is what validates its calls.
func TestSchemasGolden(t *testing.T) {
	type entry struct {
		Name   string          `json:"name"`
		Class  tool.Class      `json:"class"`
		Schema json.RawMessage `json:"input_schema"`
	}
	var entries []entry
	for _, tl := range builtinForTest(t).All() {
		info := tl.Info()
		inner := tl
		for {
			w, ok := inner.(wrapped)
			if !ok {
				break
			}
			inner = w.Tool
		}
		if s, ok := inner.(*shellSessionTool); ok {
			inner = s.Tool
		}
		derived, ok, err := tool.DerivedSchema(inner)
		if !ok || err != nil {
			t.Fatalf("%s: schema not derivable (built with New: %v): %v", info.Name, ok, err)
		}
		if !*updateGolden && !bytes.Equal(derived, info.Schema) {
			t.Errorf("%s sends a schema that differs from its input type's:\nsent:    %s\nderived: %s", info.Name, info.Schema, derived)
		}
		entries = append(entries, entry{info.Name, info.Class, derived})
	}
	got, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(schemasGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(schemasGolden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemasGolden)
	if err != nil {
		t.Fatalf("%v (run go test ./tools -run Schema -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("schemas differ from %s (-want +got); rerun with -update if the change is intended:\n%s",
			schemasGolden, cmp.Diff(string(want), string(got)))
	}
}

// seedSchemas are the input schemas seed 000 gives, without descriptions
// and defaults (those are prose; the structure is the contract).
// TodoWrite carries seed 004's TaskCreate/TaskUpdate fields (priority,
// blocked_by) as well.
var seedSchemas = map[string]string{
	"TodoWrite":     `{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"content":{"type":"string","minLength":1},"status":{"type":"string","enum":["pending","in_progress","completed"]},"priority":{"type":"string","enum":["high","medium","low"]},"blocked_by":{"type":"array","items":{"type":"string"}}},"required":["content","status","id"],"additionalProperties":false}}},"required":["todos"],"additionalProperties":false}`,
	"LS":            `{"type":"object","properties":{"path":{"type":"string"},"ignore":{"type":"array","items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`,
	"Grep":          `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"glob":{"type":"string"},"type":{"type":"string"},"output_mode":{"type":"string","enum":["content","files_with_matches","count"]},"-n":{"type":"boolean"},"-i":{"type":"boolean"},"-A":{"type":"number"},"-B":{"type":"number"},"-C":{"type":"number"},"head_limit":{"type":"number"},"multiline":{"type":"boolean"}},"required":["pattern"],"additionalProperties":false}`,
	"Glob":          `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`,
	"WriteFile":     `{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`,
	"EditTool":      `{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["file_path","old_string","new_string"],"additionalProperties":false}`,
	"MultiEditTool": `{"type":"object","properties":{"file_path":{"type":"string"},"edits":{"type":"array","minItems":1,"items":{"type":"object","properties":{"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["old_string","new_string"],"additionalProperties":false}}},"required":["file_path","edits"],"additionalProperties":false}`,
	"WebFetch":      `{"type":"object","properties":{"url":{"type":"string","format":"uri"},"prompt":{"type":"string"}},"required":["url","prompt"],"additionalProperties":false}`,
}

// TestSchemasMatchSeed checks the structure the seed fixes: property names
// and types, required lists, enums, minLength/minItems and closed objects.
// Odin may add bounds the seed lacks (minimum, a minLength) and may use
// "integer" where the seed says "number".
func TestSchemasMatchSeed(t *testing.T) {
	set := builtinForTest(t)
	for name, seed := range seedSchemas {
		t.Run(name, func(t *testing.T) {
			tl, ok := set.Get(name)
			if !ok {
				t.Fatalf("Builtin has no %s; it has %v", name, set.Names())
			}
			var want, got map[string]any
			if err := json.Unmarshal([]byte(seed), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(tl.Info().Schema, &got); err != nil {
				t.Fatal(err)
			}
			dropSeedExtensions(name, got)
			if d := cmp.Diff(seedShape(want, want), seedShape(got, want)); d != "" {
				t.Errorf("%s schema differs from seed 000 (-seed +odin):\n%s", name, d)
			}
		})
	}
}

// seedShape projects schema s onto the keywords the seed schema ref uses,
// recursively, so extra keywords in s are ignored and missing ones show.
func seedShape(s, ref map[string]any) map[string]any {
	out := map[string]any{}
	for k, rv := range ref {
		v, ok := s[k]
		if !ok {
			out[k] = "<missing>"
			continue
		}
		switch k {
		case "type":
			if v == "integer" && rv == "number" {
				v = "number"
			}
			out[k] = v
		case "required":
			req := toStrings(v)
			slices.Sort(req)
			out[k] = req
		case "properties":
			props := map[string]any{}
			sp, _ := v.(map[string]any)
			for name, rp := range rv.(map[string]any) {
				p, ok := sp[name].(map[string]any)
				if !ok {
					props[name] = "<missing>"
					continue
				}
				props[name] = seedShape(p, rp.(map[string]any))
			}
			for name := range sp {
				if _, ok := rv.(map[string]any)[name]; !ok {
					props[name] = "<not in seed>"
				}
			}
			out[k] = props
		case "items":
			sv, _ := v.(map[string]any)
			out[k] = seedShape(sv, rv.(map[string]any))
		default:
			out[k] = v
		}
	}
	return out
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestBuiltin checks the list itself: seed names, classes, every tool
// described and wrapped.
func TestBuiltin(t *testing.T) {
	set := builtinForTest(t)
	wantClass := map[string]tool.Class{
		NameLS: tool.ClassRead, NameGlob: tool.ClassRead, NameGrep: tool.ClassRead, NameTree: tool.ClassRead,
		NameReadFile: tool.ClassRead, NameGitDiff: tool.ClassRead, NameTodoWrite: tool.ClassRead, NameThink: tool.ClassRead, NameContextSummarizer: tool.ClassRead,
		NameWriteFile: tool.ClassWrite, NameEditTool: tool.ClassWrite, NameMultiEditTool: tool.ClassWrite, NameInitTool: tool.ClassWrite, NameRepoMap: tool.ClassRead,
		NameExecuteCommand: tool.ClassExecute, NameShellSession: tool.ClassExecute, NamePython: tool.ClassExecute, NameWebFetch: tool.ClassWeb, NameWebSearch: tool.ClassWeb,
		NameWebBrowser: tool.ClassWeb,
	}
	gotClass := map[string]tool.Class{}
	for _, tl := range set.All() {
		info := tl.Info()
		gotClass[info.Name] = info.Class
		if len(info.Description) < 120 || strings.TrimSpace(info.Description) != info.Description {
			t.Errorf("%s: description is missing, too short or untrimmed (%d chars)", info.Name, len(info.Description))
		}
	}
	if d := cmp.Diff(wantClass, gotClass); d != "" {
		t.Errorf("tools and classes (-want +got):\n%s", d)
	}
	if _, ok := Builtin(BuiltinOptions{}).Get(NameWebFetch); ok {
		t.Error("WebFetch listed without a fetcher")
	}
	// Every tool is wrapped (by WithRecover, the only decorator Builtin
	// applies), not handed out bare.
	for _, tl := range set.All() {
		if _, ok := tl.(wrapped); !ok {
			t.Errorf("%s is not wrapped with WithRecover (%T)", tl.Info().Name, tl)
		}
	}
}

// dropSeedExtensions removes the optional properties later seeds add to a
// seed 000 schema: seed 004 gives todo items acceptance criteria.
func dropSeedExtensions(name string, schema map[string]any) {
	if name != "TodoWrite" {
		return
	}
	todos, _ := schema["properties"].(map[string]any)["todos"].(map[string]any)
	items, _ := todos["items"].(map[string]any)
	props, _ := items["properties"].(map[string]any)
	delete(props, "acceptance")
}

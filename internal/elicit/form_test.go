package elicit

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// everythingSchema is a shortened copy of the kinds of fields
// server-everything's trigger-elicitation-request asks for.
const everythingSchema = `{"type":"object","properties":{
 "name":{"type":"string","title":"String","description":"Your full, legal name"},
 "check":{"type":"boolean","title":"Boolean"},
 "email":{"type":"string","format":"email"},
 "integer":{"type":"integer","minimum":1,"maximum":100,"default":42},
 "number":{"type":"number","minimum":0,"maximum":1000,"default":3.14},
 "friend":{"type":"string","enum":["Monica","Rachel","Joey"],"default":"Monica"},
 "hero":{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Green Lantern"}],"default":"hero-1"},
 "fish":{"type":"array","minItems":1,"maxItems":2,"items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"},{"const":"fish-3","title":"Trout"}]},"default":["fish-1"]},
 "pet":{"type":"string","enum":["pet-1","pet-2"],"enumNames":["Cats","Dogs"]}
},"required":["name"]}`

func TestParseFormKeepsTheServersOrderAndKinds(t *testing.T) {
	f, err := ParseForm(json.RawMessage(everythingSchema))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fl := range f.Fields {
		names = append(names, fl.Name)
	}
	if diff := cmp.Diff([]string{"name", "check", "email", "integer", "number", "friend", "hero", "fish", "pet"}, names); diff != "" {
		t.Errorf("field order (-want +got):\n%s", diff)
	}
	if !f.Fields[0].Required || f.Fields[1].Required {
		t.Errorf("required: name %v, check %v", f.Fields[0].Required, f.Fields[1].Required)
	}
	if diff := cmp.Diff([]Choice{{"fish-1", "Tuna"}, {"fish-2", "Salmon"}, {"fish-3", "Trout"}}, f.Fields[7].Choices); diff != "" {
		t.Errorf("multi-select choices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Choice{{"pet-1", "Cats"}, {"pet-2", "Dogs"}}, f.Fields[8].Choices); diff != "" {
		t.Errorf("legacy enumNames (-want +got):\n%s", diff)
	}
	want := map[string]any{"integer": int64(42), "number": 3.14, "friend": "Monica", "hero": "hero-1", "fish": []any{"fish-1"}}
	if diff := cmp.Diff(want, f.Defaults()); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestParseFormRefusesWhatMCPDoesNotAllow(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"nested":{"type":"object","properties":{}}}}`,
		`{"type":"object","properties":{"x":{"description":"no type"}}}`,
		`{"type":"array"}`,
		`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}`,
	} {
		if _, err := ParseForm(json.RawMessage(schema)); err == nil {
			t.Errorf("ParseForm(%s) = nil error", schema)
		}
	}
}

func TestFieldParse(t *testing.T) {
	f, err := ParseForm(json.RawMessage(everythingSchema))
	if err != nil {
		t.Fatal(err)
	}
	field := func(name string) Field {
		for _, fl := range f.Fields {
			if fl.Name == name {
				return fl
			}
		}
		t.Fatalf("no field %s", name)
		return Field{}
	}
	tests := []struct {
		field, in string
		want      any
		bad       bool
	}{
		{"name", "Ada", "Ada", false},
		{"name", "", nil, true}, // required, no default
		{"check", "y", true, false},
		{"check", "no", false, false},
		{"check", "maybe", nil, true},
		{"check", "", nil, false}, // optional, left out
		{"email", "ada@example.com", "ada@example.com", false},
		{"email", "not an address", nil, true},
		{"integer", "", int64(42), false},
		{"integer", "7", int64(7), false},
		{"integer", "7.5", nil, true},
		{"integer", "101", nil, true},
		{"number", "2.5", 2.5, false},
		{"number", "x", nil, true},
		{"friend", "Joey", "Joey", false},
		{"friend", "2", "Rachel", false},
		{"friend", "Ross", nil, true},
		{"hero", "Green Lantern", "hero-2", false},
		{"fish", "Tuna, fish-3", []any{"fish-1", "fish-3"}, false},
		{"fish", "1,2,3", nil, true}, // maxItems 2
		{"fish", "", []any{"fish-1"}, false},
	}
	for _, tt := range tests {
		got, err := field(tt.field).Parse(tt.in)
		if tt.bad != (err != nil) {
			t.Errorf("%s.Parse(%q) error = %v, want error %v", tt.field, tt.in, err, tt.bad)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s.Parse(%q) (-want +got):\n%s", tt.field, tt.in, diff)
		}
	}
	if _, err := field("name").Parse(" "); !errors.Is(err, ErrFieldRequired) {
		t.Errorf("blank required field: %v, want ErrFieldRequired", err)
	}
}

func TestFormCompleteAppliesDefaultsAndValidates(t *testing.T) {
	f, err := ParseForm(json.RawMessage(everythingSchema))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Complete(map[string]any{"name": "Ada", "integer": float64(9)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "Ada", "integer": int64(9), "number": 3.14, "friend": "Monica", "hero": "hero-1", "fish": []any{"fish-1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []map[string]any{
		{},                             // name missing
		{"name": "Ada", "nope": 1},     // unknown field
		{"name": 5},                    // wrong type
		{"name": "Ada", "friend": "X"}, // not a choice
	} {
		if _, err := f.Complete(bad); err == nil {
			t.Errorf("Complete(%v) = nil error", bad)
		}
	}
}

package actors

import (
	"encoding/json"
	"strings"
	"testing"
)

// The Report schemas leave out what Odin fills in itself: the model is not
// shown those properties (they cost every request their definitions), a
// report without them is accepted, and one that sets them is refused.
func TestReportSchemaLeavesOutOdinFilledFields(t *testing.T) {
	cases := []struct {
		agent   string
		omitted []string
		good    string
	}{
		{"code", []string{"files_modified", "files_created", "lint"},
			`{"task":"add a limiter","summary":"added api/ratelimit.go"}`},
		{"qa", []string{"criteria", "coverage"},
			`{"checks":[],"passed":true,"blockers":[],"warnings":[],"summary":"ok"}`},
		{"init", []string{"mode", "path", "token_count", "token_budget", "changes_from_previous"},
			`{"sections":[{"name":"Objective","content":"x","source":"README.md","confidence":1}]}`},
	}
	defs := map[string]*AgentDefinition{}
	for _, a := range Builtins() {
		defs[a.Name] = a
	}
	for _, c := range cases {
		t.Run(c.agent, func(t *testing.T) {
			rt := defs[c.agent].ReportTool()
			var schema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(rt.Info().Schema, &schema); err != nil {
				t.Fatal(err)
			}
			for _, p := range c.omitted {
				if _, ok := schema.Properties[p]; ok {
					t.Errorf("the schema still offers %s", p)
				}
			}
			if c.agent == "init" && strings.Contains(string(schema.Properties["sections"]), "token_count") {
				t.Errorf("the sections' items still offer token_count: %s", schema.Properties["sections"])
			}
			res, err := rt.Run(t.Context(), nil, []byte(c.good))
			if err != nil || res.IsError {
				t.Fatalf("a report without Odin's fields was refused: %+v %v", res, err)
			}
			var in map[string]any
			if err := json.Unmarshal([]byte(c.good), &in); err != nil {
				t.Fatal(err)
			}
			in[c.omitted[0]] = "set by the model"
			bad, _ := json.Marshal(in)
			if res, err := rt.Run(t.Context(), nil, bad); err != nil || !res.IsError {
				t.Errorf("a report setting %s was accepted: %+v %v", c.omitted[0], res, err)
			}
		})
	}
}

package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// specialistRequest is shaped like a Search specialist's first request in
// the real CLI: a 6 KB system prompt, the brief, and seven tools whose
// schemas and descriptions total ~15 KB.
func specialistRequest() Request {
	var tools []ToolDef
	for i := range 7 {
		var props []string
		for j := range 8 {
			props = append(props, fmt.Sprintf(`"p%d":{"type":"string","description":%q}`, j, strings.Repeat("what this parameter means. ", 6)))
		}
		tools = append(tools, ToolDef{Name: fmt.Sprintf("Tool%d", i), Description: strings.Repeat("Describes the tool at some length. ", 20),
			Parameters: json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":["p0"]}`)})
	}
	return Request{Model: "m", Agent: "search", MaxTokens: 4096, Tools: tools, Messages: []Message{
		{Role: RoleSystem, Content: strings.Repeat("You are the Search agent. <rules> & \"quotes\"\n", 130)},
		{Role: RoleUser, Content: "find thing 1"},
	}}
}

func BenchmarkEncodeRequest(b *testing.B) {
	req := specialistRequest()
	var tw toolWires
	b.ReportAllocs()
	for range b.N {
		if _, err := encodeRequest(req, maxTokensField, &tw); err != nil {
			b.Fatal(err)
		}
	}
}

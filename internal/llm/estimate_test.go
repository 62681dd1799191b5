package llm

import (
	"encoding/json"
	"testing"
)

// A tool's schema is estimated from its bytes, as its text would be, and
// without copying it: every request of every specialist is estimated for
// its ledger.
func TestEstimateToolsCountsSchemaBytesWithoutCopying(t *testing.T) {
	schema := `{"type":"object","properties":{"path":{"type":"string","description":"absolute path"}}}`
	defs := []ToolDef{{Name: "ReadFile", Description: "Reads a file.", Parameters: json.RawMessage(schema)}}
	want := EstimateTokens("ReadFile") + EstimateTokens("Reads a file.") + EstimateTokens(schema)
	if got := EstimateTools(defs); got != want {
		t.Errorf("EstimateTools = %d, want %d", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { _ = EstimateTools(defs) }); n != 0 {
		t.Errorf("EstimateTools allocates %v times per call, want 0", n)
	}
}

package actors

import (
	"strings"
	"testing"
)

// The review agent's Report tool refuses a severity outside the enum, so
// the model is told to correct it instead of the gate guessing.
func TestReviewReportSeverityIsAnEnum(t *testing.T) {
	var def *AgentDefinition
	for _, a := range Builtins() {
		if a.Name == "review" {
			def = a
		}
	}
	if def == nil {
		t.Fatal("no built-in review agent")
	}
	rt := def.ReportTool()
	bad := `{"files_reviewed":["a.go"],"issues":[{"severity":"high","file":"a.go","message":"REJECT","category":"security"}],"overall_score":2,"summary":"REJECT","approved":false}`
	res, err := rt.Run(t.Context(), nil, []byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Meta != nil {
		t.Fatalf("severity high was accepted: %+v", res)
	}
	good := strings.Replace(bad, `"high"`, `"critical"`, 1)
	res, err = rt.Run(t.Context(), nil, []byte(good))
	if err != nil || res.IsError {
		t.Fatalf("severity critical refused: %+v %v", res, err)
	}
}

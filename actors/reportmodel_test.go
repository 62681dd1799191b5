package actors

import (
	"strconv"
	"strings"
	"testing"

	"github.com/odin-code/odin/messages"
)

// The parent's model reads a writer's report without the diffs Odin
// attached (GitDiff shows them) and without the summary twice; paths,
// line counts and everything else the specialist reported stay.
func TestReportForModelLeavesOutDiffs(t *testing.T) {
	const diff = "--- /dev/null\n+++ b/api/ratelimit.go\n@@ -0,0 +1,2 @@\n+package api\n+// SECRET-LINE-OF-THE-DIFF\n"
	r := &messages.Report{Agent: "code", Status: messages.ReportOK, Summary: "Added a limiter.",
		Result: []byte(`{"task":"t","summary":"Added a limiter.","lint_passed":true,` +
			`"files_modified":[{"path":"api/server.go","diff":"-a\n+b\n","lines_changed":2}],` +
			`"files_created":[{"path":"api/ratelimit.go","diff":` + strconv.Quote(diff) + `,"lines_changed":2}],` +
			`"lint":{"runs":[{"kind":"lint","command":"go vet ./api","exit_code":0}],"clean":true,"passes":1}}`)}
	got := reportForModel(r, "code-1")
	// A clean lint pass reaches it as its verdict, without the commands.
	for _, gone := range []string{"SECRET-LINE-OF-THE-DIFF", "+b", "Summary: Added", "go vet ./api"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q is still in:\n%s", gone, got)
		}
	}
	for _, kept := range []string{`"path":"api/ratelimit.go"`, `"path":"api/server.go"`, `"lines_changed":2`, `"summary":"Added a limiter."`, `"lint_passed":true`, `"lint":{"clean":true,"passes":1}`, "GitDiff shows them", "run code-1"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q is missing from:\n%s", kept, got)
		}
	}

	// A report without diffs is passed as it was, its Summary line kept
	// when the result says something else.
	r = &messages.Report{Agent: "search", Status: messages.ReportOK, Summary: "Routes are in api/server.go.",
		Result: []byte(`{"query":"q","findings":[],"summary":"Routes are in api/server.go and cmd/main.go.","confidence":0.9}`)}
	got = reportForModel(r, "search-1")
	if !strings.Contains(got, "Summary: Routes are in api/server.go.\n") || !strings.Contains(got, string(r.Result)) || strings.Contains(got, "GitDiff") {
		t.Errorf("a report without diffs changed:\n%s", got)
	}
}

// Lint findings reach the parent whole: only a clean pass is shortened.
func TestReportForModelKeepsLintFindings(t *testing.T) {
	r := &messages.Report{Agent: "code", Status: messages.ReportOK, Summary: "s",
		Result: []byte(`{"summary":"s","lint":{"runs":[{"kind":"lint","command":"go vet ./api","exit_code":1,"output":"api/a.go:3: unreachable code"}],"clean":false,"passes":2}}`)}
	got := reportForModel(r, "code-1")
	if !strings.Contains(got, "api/a.go:3: unreachable code") || !strings.Contains(got, "go vet ./api") {
		t.Errorf("the lint findings are missing:\n%s", got)
	}
}

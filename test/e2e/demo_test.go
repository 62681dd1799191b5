package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// The demo's one answer is written after the quality gates: it follows the
// gate report, describes the code as the fix rounds left it (Retry-After
// is there), and the interim answer written before review is not printed
// as the answer.
func TestDemoAnswerIsWrittenAfterTheGates(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs go build/vet/test on the sample project")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	project := filepath.Join(work, "project")
	if err := os.CopyFS(project, os.DirFS(filepath.Join(repo, "demo", "sample"))); err != nil {
		t.Fatal(err)
	}
	if project, err = filepath.EvalSymlinks(project); err != nil {
		t.Fatal(err)
	}
	script, err := llmtest.LoadScript(filepath.Join(repo, "demo", "script.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := llmtest.Serve("127.0.0.1:0", script, llmtest.WithVars(map[string]string{"root": project}), llmtest.WithPromptCache())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	cmd := exec.Command(filepath.Join(binDir, "odin"), "-C", project, "--model", "scripted-main", "--small-model", "scripted-small",
		"run", "add rate limiting to the API")
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
		"XDG_STATE_HOME="+filepath.Join(work, "state"), "XDG_CONFIG_HOME="+filepath.Join(work, "config"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("odin run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !regexp.MustCompile(`(?s)Quality gates: PASSED after 2 fix rounds.*qa     round 2 of 3: passed.*Rate limiting is in place, and the quality gates passed after 2 fix rounds`).MatchString(out) {
		t.Errorf("the final answer does not follow the gate report:\n%s", out)
	}
	// The interim answer claimed Retry-After before review found it
	// missing; it is progress on stderr, not the answer.
	if strings.Contains(out, "Rate limiting is in place:") {
		t.Errorf("the interim answer was printed as the answer:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "odin: Rate limiting is in place:") {
		t.Errorf("the interim answer is not shown as progress:\n%s", stderr.String())
	}
	if n := len(srv.RequestsFor("synthesis")); n != 1 {
		t.Errorf("synthesis requests = %d, want 1", n)
	}
	// Issue #18: the Orchestrator's and each specialist's consecutive
	// requests keep a stable prefix, so a provider's prompt cache serves
	// most of every request after the first.
	pairs := checkPromptPrefix(t, srv.Requests(), "orchestrator", "search", "code")
	checkSharedPrefix(t, srv)
	checkGateBriefs(t, srv)
	var bytes int
	for _, r := range srv.Requests() {
		bytes += len(r.Raw)
	}
	stats := exec.Command(filepath.Join(binDir, "odin"), "-C", project, "stats", "--by", "agent", "--days", "0")
	stats.Env = cmd.Env
	out2, err := stats.CombinedOutput()
	if err != nil {
		t.Errorf("odin stats: %v\n%s", err, out2)
	}
	t.Logf("%d requests, %d bytes sent; consecutive pairs checked: %v\n%s", len(srv.Requests()), bytes, pairs, out2)
}

// checkSharedPrefix: every agent of the session starts its requests with
// the same bytes (issue #37): the Orchestrator's first request, the first
// of the run, already holds the system message and the leading tool
// definitions each specialist's first request begins with (search's,
// review's and QA's LS … Think, code's through MultiEditTool), so a
// provider's prefix cache serves them from it; QA, on the small model,
// shares Search's first request through GitDiff. Tools a role has on
// demand are listed in LoadTools, not sent.
func checkSharedPrefix(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	orch := srv.RequestsFor("orchestrator")
	if len(orch) == 0 {
		t.Fatal("no Orchestrator request")
	}
	first := llmtest.PromptText(orch[0].Body)
	for agent, tools := range map[string]int{"search": 6, "code": 9, "review": 6, "qa": 6} {
		reqs := srv.RequestsFor(agent)
		if len(reqs) == 0 {
			t.Errorf("no %s request", agent)
			continue
		}
		body := reqs[0].Body
		if len(body.Tools) < tools {
			t.Errorf("%s's first request has %d tools", agent, len(body.Tools))
			continue
		}
		lead := llmtest.PromptText(llmtest.ChatRequest{Messages: body.Messages[:1], Tools: body.Tools[:tools]})
		if n := llmtest.CommonPrefix(first, lead); n < len(lead) {
			t.Errorf("%s's first request parts from the Orchestrator's first at byte %d of its %d-byte system message and first %d tools:\norchestrator: %.120q\n%s: %.120q",
				agent, n, len(lead), tools, first[n:], agent, lead[n:])
		}
	}
	// The small model's cache: QA's first request starts as Search's
	// first, through GitDiff.
	if search, qa := srv.RequestsFor("search"), srv.RequestsFor("qa"); len(search) > 0 && len(qa) > 0 {
		lead := llmtest.PromptText(llmtest.ChatRequest{Messages: qa[0].Body.Messages[:1], Tools: qa[0].Body.Tools[:7]})
		if qa[0].Body.Tools[6].Function.Name != "GitDiff" {
			t.Errorf("QA's seventh tool is %s, want GitDiff", qa[0].Body.Tools[6].Function.Name)
		}
		if n := llmtest.CommonPrefix(llmtest.PromptText(search[0].Body), lead); n < len(lead) {
			t.Errorf("QA's first request parts from Search's first at byte %d of %d", n, len(lead))
		}
	}
	for _, r := range srv.RequestsFor("code") {
		var names []string
		for _, tl := range r.Body.Tools {
			names = append(names, tl.Function.Name)
		}
		if !slices.Contains(names, "LoadTools") || slices.Contains(names, "TodoWrite") || slices.Contains(names, "ResearchRequest") || slices.Contains(names, "ShellSession") {
			t.Errorf("code's tools = %v, want TodoWrite, ResearchRequest and ShellSession on demand (LoadTools)", names)
			break
		}
	}
	for _, r := range orch {
		if names := r.Body.ToolNames(); !slices.Contains(names, "LoadTools") || slices.Contains(names, "WebFetch") {
			t.Errorf("the Orchestrator's tools = %v, want WebFetch on demand (LoadTools)", names)
			break
		}
	}
}

// checkGateBriefs: a gate round's brief does not re-send what an earlier
// one sent (issue #37). Of the briefs the gate specialists got (review's
// two, QA's diagnosis, the two fix rounds'), only the first has the whole
// diff; the later ones say what changed since, and QA's diagnosis of the
// failing test is not sent the review verdicts.
func checkGateBriefs(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	var briefs []string
	for _, agent := range []string{"review", "qa", "code"} {
		for _, r := range srv.RequestsFor(agent) {
			if len(r.Body.Messages) != 2 { // a run's first request: system, then role and brief
				continue
			}
			_, brief, _ := strings.Cut(r.Body.Messages[1].Text(), "# Your task\n")
			if agent != "code" || strings.Contains(brief, "fix round") {
				briefs = append(briefs, agent+": "+brief)
			}
		}
	}
	if len(briefs) != 5 {
		t.Fatalf("%d gate briefs, want 5 (2 reviews, QA, 2 fix rounds)", len(briefs))
	}
	const whole = "+// Limiter is a token bucket: up to burst requests at once, refilled"
	var with []string
	for _, b := range briefs {
		if strings.Contains(b, whole) {
			with = append(with, b)
		}
		if strings.HasPrefix(b, "qa: ") && strings.Contains(b, "Sound token bucket") {
			t.Errorf("QA's diagnosis is sent the review verdicts:\n%s", b)
		}
	}
	if len(with) != 1 || !strings.HasPrefix(with[0], "review: ") {
		t.Errorf("%d gate briefs carry the whole diff, want review's first only:\n%s", len(with), strings.Join(with, "\n---\n"))
	}
}

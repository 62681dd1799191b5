package actors

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

func researchReport(summary, url string) llmtest.Step {
	return report(map[string]any{"query": "q", "type": "documentation", "summary": summary, "confidence": 0.9,
		"sources": []any{map[string]any{"url": url, "title": "t", "type": "other", "reliability": 1}}})
}

// Code asks the Research agent through the Orchestrator: the answer comes
// back as the tool's result in the asking run; the same question again
// (other case and spacing) is answered from the cache without a second
// research run.
func TestResearchRequestRoundTripAndCache(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("code", "use the API", "use the new API")),
			llmtest.Reply("done"),
		).
		Add("code",
			llmtest.Calls(llmtest.Call(NameResearchRequest, map[string]any{"question": "Which version of libfoo added Frob()?"})),
			llmtest.Step{When: "RESEARCH-ANSWER-41", ToolCalls: llmtest.Calls(llmtest.Call(NameResearchRequest, map[string]any{"question": "which  version of LIBFOO added frob()?"})).ToolCalls},
			llmtest.Step{When: "from the research cache", ToolCalls: report(map[string]any{"task": "t", "summary": "used Frob"}).ToolCalls},
		).
		Add("research", researchReport("RESEARCH-ANSWER-41: libfoo 4.1 added Frob", "https://pkg.go.dev/libfoo"))
	h := newHarness(t, s)
	h.sess.Submit("use the new API", messages.ModeEdit)
	r := h.turn()
	if r.Status != messages.TurnDone {
		t.Fatalf("turn = %+v", r)
	}
	if n := len(h.client.RequestsFor("research")); n != 1 {
		t.Errorf("research ran %d times, want 1 (the second answer is cached)", n)
	}
	code := h.client.RequestsFor("code")
	if len(code) != 3 {
		t.Fatalf("code sent %d requests, want 3", len(code))
	}
	// The research agent's brief carries the question and who asked.
	brief := h.client.RequestsFor("research")[0].Messages[1].Content
	if !strings.Contains(brief, "The code specialist") || !strings.Contains(brief, "Which version of libfoo added Frob()?") {
		t.Errorf("research brief = %q", brief)
	}
	// Code has ResearchRequest on demand: LoadTools lists it, and the
	// calls above ran without loading it first.
	for _, def := range code[0].Tools {
		if def.Name == NameLoadTools && strings.Contains(def.Description, "- "+NameResearchRequest+":") {
			goto offered
		}
	}
	t.Errorf("code was not offered %s: %v", NameResearchRequest, toolNames(code[0]))
offered:
	for _, tool := range toolNames(h.client.RequestsFor("research")[0]) {
		if tool == NameResearchRequest {
			t.Error("the researcher was offered ResearchRequest: it would ask itself")
		}
	}
}

// Answers expire by the research TTL of their sources: a security
// advisory's (1h by default) is stale after two hours, a documentation
// answer (7 days) is not.
func TestResearchTTLBySource(t *testing.T) {
	h := newHarness(t, llmtest.NewScript())
	o := &Orchestrator{deps: h.deps}
	for _, tc := range []struct {
		raw  string
		want time.Duration
	}{
		{`{"sources":[{"url":"https://nvd.nist.gov/vuln/detail/CVE-2024-1","type":"security"}]}`, time.Hour},
		{`{"sources":[{"url":"https://pkg.go.dev/x","type":"official_docs"}]}`, 7 * 24 * time.Hour},
		{`{"sources":[{"url":"https://pkg.go.dev/x","type":"official_docs"},{"url":"https://x","type":"security"}]}`, time.Hour},
		{`{"sources":[]}`, 24 * time.Hour},
	} {
		if got := o.researchTTL([]byte(tc.raw)); got != tc.want {
			t.Errorf("researchTTL(%s) = %s, want %s", tc.raw, got, tc.want)
		}
	}
	if researchCacheKey("A  b") != researchCacheKey("a b") || researchCacheKey("a b") == researchCacheKey("a c") {
		t.Error("cache keys must ignore case and spacing only")
	}
}

// A cached answer whose sources are a security advisory is stale after its
// TTL (1h): asked again two hours later, the researcher runs again.
func TestResearchCacheExpires(t *testing.T) {
	var mu sync.Mutex
	// An offset on the real clock: task deadlines are taken from it.
	var offset time.Duration
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	ask := llmtest.Calls(llmtest.Call(NameResearchRequest, map[string]any{"question": "Is libfoo 1.2 affected by CVE-2026-1?"}))
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(delegation("code", "check", "check libfoo")), llmtest.Reply("done"),
			llmtest.Calls(delegation("code", "check", "check libfoo again")), llmtest.Reply("done again"),
		).
		Add("code",
			ask, report(map[string]any{"task": "t", "summary": "checked"}),
			ask, report(map[string]any{"task": "t", "summary": "checked again"}),
		).
		Add("research",
			researchReport("affected", "https://nvd.nist.gov/vuln/detail/CVE-2026-1"),
			researchReport("still affected", "https://nvd.nist.gov/vuln/detail/CVE-2026-1"),
		)
	h := newHarness(t, s, func(d *Deps) { d.Now = clock })
	h.sess.Submit("check libfoo", messages.ModeEdit)
	if r := h.turn(); r.Status != messages.TurnDone {
		t.Fatalf("turn 1 = %+v", r)
	}
	mu.Lock()
	offset = 2 * time.Hour
	mu.Unlock()
	h.sess.Submit("check libfoo again", messages.ModeEdit)
	if r := h.turn(); r.Status != messages.TurnDone {
		t.Fatalf("turn 2 = %+v", r)
	}
	if n := len(h.client.RequestsFor("research")); n != 2 {
		t.Errorf("research ran %d times, want 2 (the security answer expired after 1h)", n)
	}
}

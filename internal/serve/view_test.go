package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
)

// historyOpener serves a store to the history endpoints; it starts no
// session.
type historyOpener struct {
	Opener
	st store.Store
}

func (h historyOpener) History(ctx context.Context, fn func(store.Store) error) error {
	return fn(h.st)
}

// oldGateNote is the gate note of gatedSession as the actors wrote it
// before they kept each stage's most rounds; newGateNote as they write it
// now (actors/synthesis.go), "(round 1 of 3)".
const (
	oldGateNote = "Quality gates passed after 2 fix round(s).\nRequired because: 3 files changed, api/ratelimit.go is new; public API changed.\n- review (round 1): failed — 1 issue(s), 1 blocking: lacks Retry-After\n- fix (round 1): applied — fixed\n- review (round 2): passed — fine\n- qa (round 2): failed — TestX fails\n- fix (round 2): applied — fixed again\n- qa (round 3): passed — 3 check(s) passed"
	newGateNote = "Quality gates passed after 2 fix round(s).\nRequired because: 3 files changed, api/ratelimit.go is new; public API changed.\n- review (round 1 of 3): failed — 1 issue(s), 1 blocking: lacks Retry-After\n- fix (round 1 of 2): applied — fixed\n- review (round 2 of 3): passed — fine\n- qa (round 2 of 3): failed — TestX fails\n- fix (round 2 of 2): applied — fixed again\n- qa (round 3 of 3): passed — 3 check(s) passed"
)

// gatedSession stores a root session whose turn ran a review that sent the
// change back, a fix round, and a QA diagnosis, as the actors record them
// (with the gate note of a session stored before the most rounds were kept).
func gatedSession(t *testing.T, st store.Store, project string) string {
	t.Helper()
	return gatedSessionNote(t, st, project, oldGateNote)
}

func gatedSessionNote(t *testing.T, st store.Store, project, note string) string {
	t.Helper()
	ctx := t.Context()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	root, err := st.CreateSession(ctx, store.Session{Project: project, Title: "add rate limiting", Agent: store.AgentOrchestrator, Model: "m", CreatedAt: at(0)})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(session string, role llm.Role, s int, parts ...store.Part) {
		if _, err := st.AppendMessage(ctx, store.Message{SessionID: session, Role: role, CreatedAt: at(s), Parts: parts}); err != nil {
			t.Fatal(err)
		}
	}
	msg(root.ID, llm.RoleUser, 0, store.TextPart{Text: "add rate limiting to the API"})
	msg(root.ID, llm.RoleAssistant, 1, store.TextPart{Text: "interim"})
	child := func(title, agent string, s int, report string) string {
		c, err := st.CreateSession(ctx, store.Session{ParentID: root.ID, Agent: agent, Title: title, Model: "m", CreatedAt: at(s)})
		if err != nil {
			t.Fatal(err)
		}
		msg(c.ID, llm.RoleUser, s, store.TextPart{Text: "brief: " + title})
		msg(c.ID, llm.RoleAssistant, s+1, store.ToolCallPart{ID: "r", Name: "Report", Input: report, Finished: true})
		if err := st.AddUsage(ctx, store.UsageRecord{SessionID: c.ID, Agent: agent, Model: "m", PromptTokens: 100, CachedTokens: 40, CompletionTokens: 10, Cost: 0.01, At: at(s + 1)}); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	child("add rate limiting", "code", 2, `{"summary":"done"}`)
	child("review the change", "review", 4, `{"issues":[{"severity":"major","file":"a.go","line":3,"message":"no Retry-After"}],"summary":"lacks Retry-After","approved":false}`)
	child("fix review findings", "code", 6, `{"summary":"fixed"}`)
	child("review the change", "review", 8, `{"issues":[],"summary":"fine","approved":true}`)
	child("diagnose failing checks", "qa", 10, `{"checks":[],"passed":false,"blockers":["TestX fails"],"summary":"TestX fails"}`)
	child("fix QA findings", "code", 12, `{"summary":"fixed again"}`)
	if err := st.RecordTool(ctx, store.ToolRecord{SessionID: root.ID, CallID: "c1", Name: "agent_code", Agent: "orchestrator", At: at(2), Elapsed: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := st.AddUsage(ctx, store.UsageRecord{SessionID: root.ID, Agent: "orchestrator", Model: "m", PromptTokens: 50, Cost: 0.02, At: at(1)}); err != nil {
		t.Fatal(err)
	}
	msg(root.ID, llm.RoleUser, 14, store.TextPart{Text: gateNotePrefix + note})
	msg(root.ID, llm.RoleAssistant, 15, store.TextPart{Text: "Rate limiting is in place."})
	return root.ID
}

func newViewServer(t *testing.T) (*Server, string, string, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(base, "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	root := filepath.Join(base, "root")
	inside := gatedSession(t, st, filepath.Join(root, "proj"))
	outside := gatedSession(t, st, filepath.Join(base, "rootother", "proj")) // shares the prefix, not the root
	s, err := New(Options{Opener: historyOpener{st: st}, Token: "tok", Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s, inside, outside, root
}

func get(t *testing.T, h http.Handler, path, token string) (int, string, http.Header) {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b), rec.Header()
}

func TestHistoryListsStoredSessionsUnderTheRoots(t *testing.T) {
	s, inside, _, root := newViewServer(t)
	h := s.Handler()
	code, body, _ := get(t, h, "/v1/history", "tok")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	var list []HistoryItem
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != inside {
		t.Fatalf("list = %+v, want only the session under the root", list)
	}
	got := list[0]
	if got.Project != filepath.Join(root, "proj") || got.Turns != 1 || got.Runs != 6 || got.Status != "stored" || got.Title != "add rate limiting" {
		t.Errorf("item = %+v", got)
	}
	if want := 0.08; got.Cost < want-1e-9 || got.Cost > want+1e-9 {
		t.Errorf("cost %v, want %v (the children's spend counts in the root)", got.Cost, want)
	}
	for q, n := range map[string]int{"RATE": 1, "nomatch": 0, inside[:8]: 1} {
		code, body, _ := get(t, h, "/v1/history?q="+q, "tok")
		var l []HistoryItem
		_ = json.Unmarshal([]byte(body), &l)
		if code != http.StatusOK || len(l) != n {
			t.Errorf("q=%s: %d %d sessions, want %d", q, code, len(l), n)
		}
	}
	if code, body, _ := get(t, h, "/v1/history?limit=0", "tok"); code != http.StatusBadRequest || !strings.Contains(body, "limit") {
		t.Errorf("limit=0: %d %s", code, body)
	}
}

func TestTimelineRunsGatesAndFixRounds(t *testing.T) {
	s, inside, outside, _ := newViewServer(t)
	h := s.Handler()
	code, body, _ := get(t, h, "/v1/history/"+inside, "tok")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	var tl Timeline
	if err := json.Unmarshal([]byte(body), &tl); err != nil {
		t.Fatal(err)
	}
	type run struct{ Agent, Gate, Outcome string }
	var runs []run
	rounds := []int{}
	var labels []string
	for _, r := range tl.Runs {
		runs = append(runs, run{r.Agent, r.Gate, r.Outcome})
		rounds = append(rounds, r.Round)
		labels = append(labels, r.GateLabel)
		if r.Turn != 1 || r.Report == nil || r.End.Before(r.Start) {
			t.Errorf("run %+v", r)
		}
	}
	want := []run{{"code", "", "ok"}, {"review", "review", "findings"}, {"code", "fix", "ok"}, {"review", "review", "ok"}, {"qa", "qa", "findings"}, {"code", "fix", "ok"}}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 0, 1, 1, 1, 2}, rounds); diff != "" {
		t.Errorf("rounds (-want +got):\n%s", diff)
	}
	// Each gate's own runs, as the terminal counts them: the first QA
	// diagnosis is QA's round 1 though a fix round came before it.
	if diff := cmp.Diff([]string{"", "review round 1", "fix round 1", "review round 2", "qa round 1", "fix round 2"}, labels); diff != "" {
		t.Errorf("gate labels (-want +got):\n%s", diff)
	}
	if len(tl.Gates) != 1 {
		t.Fatalf("gates = %+v", tl.Gates)
	}
	g := tl.Gates[0]
	if want := []string{"3 files changed, api/ratelimit.go is new", "public API changed"}; !slices.Equal(g.Reasons, want) {
		t.Errorf("gate reasons = %q, want %q", g.Reasons, want)
	}
	if !g.Passed || g.FixRounds != 2 || g.Turn != 1 || len(g.Stages) != 6 {
		t.Errorf("gate outcome = %+v", g)
	}
	if g.Verdict != "passed after 2 fix rounds" {
		t.Errorf("verdict %q", g.Verdict)
	}
	if s := g.Stages[3]; s != (GateStage{Stage: "qa", Round: 2, Run: 1, Label: "qa round 1: failed", Mark: "failed", Summary: "TestX fails"}) {
		t.Errorf("stage 4 = %+v", s)
	}
	if len(tl.Turns) != 1 || tl.Turns[0].Answer != "Rate limiting is in place." {
		t.Errorf("turns = %+v", tl.Turns)
	}
	if len(tl.Usage) != 7 || len(tl.Tools) != 1 {
		t.Errorf("usage %d records, tools %d, want 7 and 1", len(tl.Usage), len(tl.Tools))
	}
	// A session outside the roots is not shown, whatever its id.
	if code, body, _ := get(t, h, "/v1/history/"+outside, "tok"); code != http.StatusNotFound {
		t.Errorf("outside the roots: %d %s", code, body)
	}
	if code, body, _ := get(t, h, "/v1/history/"+outside+"/transcript", "tok"); code != http.StatusNotFound || strings.Contains(body, "Rate limiting") {
		t.Errorf("outside the roots: %d %s", code, body)
	}
}

// A session stored with each stage's most rounds in its gate note shows
// them in the stage labels and the runs' gate labels, "qa round 1 of 3";
// one stored before (TestTimelineRunsGatesAndFixRounds) reads as before.
func TestTimelineGateRoundsOfMax(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(base, "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	id := gatedSessionNote(t, st, filepath.Join(base, "proj"), newGateNote)
	s, err := New(Options{Opener: historyOpener{st: st}, Token: "tok", Roots: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	code, body, _ := get(t, s.Handler(), "/v1/history/"+id, "tok")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	var tl Timeline
	if err := json.Unmarshal([]byte(body), &tl); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range tl.Runs {
		labels = append(labels, r.GateLabel)
	}
	if diff := cmp.Diff([]string{"", "review round 1 of 3", "fix round 1 of 2", "review round 2 of 3", "qa round 1 of 3", "fix round 2 of 2"}, labels); diff != "" {
		t.Errorf("gate labels (-want +got):\n%s", diff)
	}
	if len(tl.Gates) != 1 || len(tl.Gates[0].Stages) != 6 {
		t.Fatalf("gates = %+v", tl.Gates)
	}
	var stages []string
	for _, st := range tl.Gates[0].Stages {
		stages = append(stages, fmt.Sprintf("%s %d %d/%d", st.Label, st.Round, st.Run, st.MaxRounds))
	}
	want := []string{"review round 1 of 3: failed 1 1/3", "fix round 1 of 2: applied 1 1/2", "review round 2 of 3: passed 2 2/3",
		"qa round 1 of 3: failed 2 1/3", "fix round 2 of 2: applied 2 2/2", "qa round 2 of 3: passed 3 2/3"}
	if diff := cmp.Diff(want, stages); diff != "" {
		t.Errorf("stages (label round run/max) (-want +got):\n%s", diff)
	}
	if s := tl.Gates[0].Stages[3]; s.Summary != "TestX fails" || s.Mark != "failed" {
		t.Errorf("stage 4 = %+v", s)
	}
}

func TestTranscriptOfASpecialistRun(t *testing.T) {
	s, inside, _, _ := newViewServer(t)
	h := s.Handler()
	_, body, _ := get(t, h, "/v1/history/"+inside, "tok")
	var tl Timeline
	if err := json.Unmarshal([]byte(body), &tl); err != nil {
		t.Fatal(err)
	}
	code, body, _ := get(t, h, "/v1/history/"+tl.Runs[1].ID+"/transcript", "tok")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	var tr Transcript
	if err := json.Unmarshal([]byte(body), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Session.Agent != "review" || len(tr.Entries) != 2 || len(tr.Usage) != 1 || tr.Usage[0].CachedTokens != 40 {
		t.Fatalf("transcript = %+v", tr)
	}
	if p := tr.Entries[0].Parts[0]; p.Type != "text" || p.Text != "brief: review the change" {
		t.Errorf("brief = %+v", p)
	}
	if p := tr.Entries[1].Parts[0]; p.Type != "tool_call" || p.Name != "Report" {
		t.Errorf("call = %+v", p)
	}
	var rep struct {
		Approved bool `json:"approved"`
		Issues   []struct {
			Severity string `json:"severity"`
		} `json:"issues"`
	}
	if err := json.Unmarshal(tr.Report, &rep); err != nil || rep.Approved || len(rep.Issues) != 1 || rep.Issues[0].Severity != "major" {
		t.Errorf("report = %s (%v)", tr.Report, err)
	}
}

// TestViewerPageNeedsNoTokenAndTheAPIDoes: the page and its assets load
// without the token and hold none; every history endpoint refuses a
// request without it.
func TestViewerPageNeedsNoTokenAndTheAPIDoes(t *testing.T) {
	s, inside, _, _ := newViewServer(t)
	h := s.Handler()
	for _, p := range []string{"/", "/view/app.js", "/view/diff.js", "/view/style.css"} {
		code, body, hdr := get(t, h, p, "")
		if code != http.StatusOK || len(body) < 100 {
			t.Errorf("%s: %d (%d bytes)", p, code, len(body))
		}
		if strings.Contains(body, "tok") && p == "/" {
			t.Errorf("%s holds the token", p)
		}
		if !strings.Contains(hdr.Get("Content-Security-Policy"), "script-src 'self'") || hdr.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", p, hdr)
		}
	}
	if code, _, _ := get(t, h, "/view/nosuch.js", ""); code != http.StatusNotFound {
		t.Errorf("missing asset: %d", code)
	}
	for _, p := range []string{"/v1/history", "/v1/history/" + inside, "/v1/history/" + inside + "/transcript"} {
		code, body, _ := get(t, h, p, "")
		if code != http.StatusUnauthorized || strings.Contains(body, "rate limiting") {
			t.Errorf("%s without the token: %d %s", p, code, body)
		}
		if code, _, _ := get(t, h, p, "wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d", p, code)
		}
	}
	// A POST to the page's paths is the API's, so it needs the token.
	req := httptest.NewRequest("POST", "/", strings.NewReader("{}"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("POST / without the token: %d", rec.Code)
	}
}

func TestHistoryWithoutAStore(t *testing.T) {
	s, err := New(Options{Token: "tok", Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	if code, body, _ := get(t, s.Handler(), "/v1/history", "tok"); code != http.StatusNotImplemented || !strings.Contains(body, "history") {
		t.Errorf("%d %s", code, body)
	}
}

// TestGateTitlesMatchTheActors: the timeline recognises gate runs by the
// descriptions actors/gates.go gives them; a renamed one must fail here,
// not silently drop the gate marks.
func TestGateTitlesMatchTheActors(t *testing.T) {
	src, err := os.ReadFile("../../actors/gates.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, lit := range []string{`"review the change"`, `"rerun the tests"`, `"diagnose failing checks"`, `"fix "+stage+" findings"`} {
		if !strings.Contains(string(src), lit) {
			t.Errorf("actors/gates.go no longer spawns %s", lit)
		}
	}
	for title, want := range map[string]string{"review the change": "review", "rerun the tests": "test", "diagnose failing checks": "qa", "fix QA findings": "fix", "fix review findings": "fix", "add rate limiting": ""} {
		if got := gateOf(title); got != want {
			t.Errorf("gateOf(%q) = %q, want %q", title, got, want)
		}
	}
	synth, err := os.ReadFile("../../actors/synthesis.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, lit := range []string{strings.TrimSpace(gateNotePrefix), `"Quality gates %s after %d fix round(s)."`, `"\n- %s (round %s): %s"`, `round += fmt.Sprintf(" of %d", s.MaxRounds)`} {
		if !strings.Contains(string(synth), lit) {
			t.Errorf("actors/synthesis.go no longer writes %s", lit)
		}
	}
}

// A model with no known price shows its cost as unknown in every part of
// the history, never as $0: the list, the timeline (with the unpriced
// models named) and a run's transcript.
func TestHistoryMarksUnpricedCostsUnknown(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(base, "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	root := filepath.Join(base, "root")
	id := gatedSession(t, st, filepath.Join(root, "proj")) // every call made by model "m"
	for _, tc := range []struct {
		name    string
		priced  func(string) bool
		unknown bool
	}{
		{"m has no price", func(m string) bool { return m != "m" }, true},
		{"m is priced", func(string) bool { return true }, false},
		{"no pricing given", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Options{Opener: historyOpener{st: st}, Token: "tok", Roots: []string{root}, Priced: tc.priced})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Shutdown)
			h := s.Handler()
			var list []HistoryItem
			_, body, _ := get(t, h, "/v1/history", "tok")
			if err := json.Unmarshal([]byte(body), &list); err != nil || len(list) != 1 {
				t.Fatalf("list %s: %v", body, err)
			}
			if list[0].CostUnknown != tc.unknown {
				t.Errorf("list: cost_unknown %v, want %v", list[0].CostUnknown, tc.unknown)
			}
			var tl Timeline
			_, body, _ = get(t, h, "/v1/history/"+id, "tok")
			if err := json.Unmarshal([]byte(body), &tl); err != nil {
				t.Fatal(err)
			}
			wantModels := []string{}
			if tc.unknown {
				wantModels = []string{"m"}
			}
			if diff := cmp.Diff(wantModels, tl.UnpricedModels); diff != "" || tl.Session.CostUnknown != tc.unknown {
				t.Errorf("timeline: unpriced models (-want +got) %s; session cost_unknown %v", diff, tl.Session.CostUnknown)
			}
			for _, r := range tl.Runs {
				if r.CostUnknown != tc.unknown {
					t.Errorf("run %s: cost_unknown %v, want %v", r.Agent, r.CostUnknown, tc.unknown)
				}
			}
			var tr Transcript
			_, body, _ = get(t, h, "/v1/history/"+tl.Runs[0].ID+"/transcript", "tok")
			if err := json.Unmarshal([]byte(body), &tr); err != nil {
				t.Fatal(err)
			}
			if tr.CostUnknown != tc.unknown || len(tr.UnpricedModels) != len(wantModels) {
				t.Errorf("transcript: cost_unknown %v unpriced %v, want %v %v", tr.CostUnknown, tr.UnpricedModels, tc.unknown, wantModels)
			}
		})
	}
}

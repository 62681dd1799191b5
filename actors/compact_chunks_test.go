package actors

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// markedHistory is n messages in rounds of four (a question, a tool call,
// its result, an answer), each holding its own marker <mNNNNN> and about
// size bytes.
func markedHistory(n, size int) []llm.Message {
	out := make([]llm.Message, 0, n)
	for i := range n {
		mark := fmt.Sprintf("<m%05d>", i)
		fill := strings.Repeat("lorem ipsum ", max(size-len(mark), 0)/12)
		switch i % 4 {
		case 0:
			out = append(out, llm.Message{Role: llm.RoleUser, Content: mark + " question " + fill})
		case 1:
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: mark + " reading",
				ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call%d", i), Name: "ReadFile", Arguments: `{"path":"/p/f` + strconv.Itoa(i) + `.go"}`}}})
		case 2:
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: fmt.Sprintf("call%d", i-1), Name: "ReadFile", Content: mark + " package p " + fill})
		default:
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: mark + " answer " + fill})
		}
	}
	return out
}

var markerRE = regexp.MustCompile(`<m(\d{5})>`)

// markers lists the message markers in s, in order of appearance.
func markers(s string) []int {
	var out []int
	for _, m := range markerRE.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// A unit is a message with the tool results that follow it, so a part
// never holds a call without its result; a message too large for one
// request is cut in the middle with a marker, its start and end kept.
func TestCompactUnits(t *testing.T) {
	huge := "HEAD " + strings.Repeat("é data ", 6000) + " TAIL" // ~48 KB
	hist := []llm.Message{
		{Role: llm.RoleUser, Content: "q1"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "LS"}, {ID: "b", Name: "Grep"}}},
		{Role: llm.RoleTool, ToolCallID: "a", Name: "LS", Content: "ls out"},
		{Role: llm.RoleTool, ToolCallID: "b", Name: "Grep", Content: "grep out"},
		{Role: llm.RoleAssistant, Content: "a1"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "ReadFile"}}},
		{Role: llm.RoleTool, ToolCallID: "c", Name: "ReadFile", Content: "file"},
		{Role: llm.RoleUser, Content: huge},
		{Role: llm.RoleAssistant, Content: "a2"},
	}
	const room = 1000
	units := compactUnits(hist, room)
	var got [][2]int
	for _, u := range units {
		got = append(got, [2]int{u.from, u.to})
		if u.tokens != llm.EstimateTokens(u.text) || u.tokens > room {
			t.Errorf("unit %d..%d: %d tokens (text %d), room %d", u.from, u.to, u.tokens, llm.EstimateTokens(u.text), room)
		}
	}
	want := [][2]int{{0, 1}, {1, 4}, {4, 5}, {5, 7}, {7, 8}, {8, 9}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("unit bounds (-want +got):\n%s", diff)
	}
	if u := units[1]; !strings.Contains(u.text, "ls out") || !strings.Contains(u.text, "grep out") || !strings.Contains(u.text, "calls Grep") {
		t.Errorf("call and results not in one unit: %q", u.text)
	}
	big := units[4]
	if !big.cut || !strings.Contains(big.text, "HEAD ") || !strings.HasSuffix(strings.TrimSpace(big.text), "TAIL") ||
		!strings.Contains(big.text, "bytes of this message were cut here") || !utf8.ValidString(big.text) {
		t.Errorf("oversize message: cut=%v, text %q…%q", big.cut, shorten(big.text, 80), big.text[max(len(big.text)-80, 0):])
	}
	for i, u := range units {
		if i != 4 && u.cut {
			t.Errorf("unit %d was cut though it fits", i)
		}
	}

	// takeChunk fills a part up to its room, and takes an oversize first
	// unit alone rather than none.
	toks := func(ns ...int64) []compactUnit {
		var us []compactUnit
		for _, n := range ns {
			us = append(us, compactUnit{tokens: n})
		}
		return us
	}
	for _, c := range []struct {
		units []compactUnit
		room  int64
		want  int
	}{
		{toks(10, 10, 10), 30, 3},
		{toks(10, 10, 10), 29, 2},
		{toks(10, 10, 10), 10, 1},
		{toks(50, 1), 10, 1},
		{toks(5), 100, 1},
	} {
		if got := takeChunk(c.units, c.room); got != c.want {
			t.Errorf("takeChunk(%v, %d) = %d, want %d", c.units, c.room, got, c.want)
		}
	}
}

// cutToTokens keeps within its room for any room, and never splits a rune.
func TestCutToTokens(t *testing.T) {
	s := strings.Repeat("日本語のテキスト", 500)
	for _, room := range []int64{0, 1, 10, 30, 31, 100, 1000, 1e6} {
		got, cut := cutToTokens(s, room)
		if llm.EstimateTokens(got) > room || !utf8.ValidString(got) || cut != (llm.EstimateTokens(s) > room) {
			t.Errorf("room %d: %d tokens, valid %v, cut %v", room, llm.EstimateTokens(got), utf8.ValidString(got), cut)
		}
	}
}

// scriptedSummaries is a compaction script answering SUMMARY-1, SUMMARY-2…
func scriptedSummaries(n int) *llmtest.Script {
	s := llmtest.NewScript()
	for i := 1; i <= n; i++ {
		s.Add("compaction", llmtest.Reply(fmt.Sprintf("SUMMARY-%d", i)))
	}
	return s
}

// checkParts asserts that the summarisation requests fit budget, cover
// every message of hist once and in order, keep each tool call with its
// result, and roll the summary forward.
func checkParts(t *testing.T, reqs []llm.Request, hist []llm.Message, budget summaryBudget) {
	t.Helper()
	seen := map[int]int{} // marker → request
	last := -1
	for k, r := range reqs {
		if size := llm.EstimateMessages(r.Messages); size > budget.input {
			t.Errorf("request %d: %d tokens, over the budget of %d", k+1, size, budget.input)
		}
		if int64(r.MaxTokens) != budget.maxTokens {
			t.Errorf("request %d: max_tokens %d, want %d", k+1, r.MaxTokens, budget.maxTokens)
		}
		material := r.Messages[1].Content
		if k > 0 && !strings.Contains(material, fmt.Sprintf("SUMMARY-%d", k)) {
			t.Errorf("request %d does not carry the summary so far (SUMMARY-%d)", k+1, k)
		}
		for _, m := range markers(material) {
			if m <= last {
				t.Fatalf("request %d: message %d after message %d: parts out of order or overlapping", k+1, m, last)
			}
			last = m
			seen[m] = k
		}
	}
	for i, m := range hist {
		k, ok := seen[i]
		if !ok {
			t.Fatalf("message %d was in no summarisation request", i)
		}
		if m.Role == llm.RoleTool && seen[i-1] != k {
			t.Errorf("tool result %d (request %d) apart from its call %d (request %d)", i, k+1, i-1, seen[i-1]+1)
		}
	}
}

// A history many times the summariser's window is summarised in parts
// that each fit, rolled up in order: the result is the last part's
// summary, which saw every message through the summaries before it.
func TestSummariserRollsPartsThatFit(t *testing.T) {
	hist := markedHistory(2000, 240) // ~120k tokens
	client, err := llmtest.NewClient(scriptedSummaries(200), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	m := Model{Client: client, ID: "small-model", ContextWindow: 16000, MaxOutput: 1000}
	var notices []string
	var spent messages.Usage
	sm := &summariser{model: m, budget: newSummaryBudget(m.ContextWindow, m.MaxOutput), hist: hist,
		notice: func(s string) { notices = append(notices, s) }, spent: func(u messages.Usage) { spent = spent.Add(u) }}
	res, err := sm.run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	reqs := client.RequestsFor("compaction")
	if len(reqs) < 8 || res.requests != len(reqs) || res.summary != fmt.Sprintf("SUMMARY-%d", len(reqs)) {
		t.Fatalf("%d requests (reported %d), summary %q", len(reqs), res.requests, res.summary)
	}
	checkParts(t, reqs, hist, sm.budget)
	var sent int64
	for _, r := range reqs {
		sent += llm.EstimateMessages(r.Messages)
	}
	if res.sent != sent || res.usage.PromptTokens == 0 || spent != res.usage {
		t.Errorf("reported %d tokens sent and usage %+v; the requests hold %d", res.sent, res.usage, sent)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "2000 messages") {
		t.Errorf("notices = %q", notices)
	}
	t.Logf("2000 messages, ~%d tokens: %d requests, %d tokens sent", llm.EstimateMessages(hist), len(reqs), sent)
}

func TestSummaryBudget(t *testing.T) {
	for _, c := range []struct {
		window, maxOutput int
		want              summaryBudget
	}{
		{128000, 16384, summaryBudget{input: 108800 - 16384, output: 16384, maxTokens: 16384}},
		{128000, 0, summaryBudget{input: 108800 - 8192, output: 8192}}, // no cap sent, room kept
		{200000, 100000, summaryBudget{input: 170000 - 50000, output: 50000, maxTokens: 50000}},
		{8000, 0, summaryBudget{input: 6800 - 1000, output: 1000}},
		{0, 500, summaryBudget{input: math.MaxInt64, output: 500, maxTokens: 500}},
	} {
		if got := newSummaryBudget(c.window, c.maxOutput); got != c.want {
			t.Errorf("newSummaryBudget(%d, %d) = %+v, want %+v", c.window, c.maxOutput, got, c.want)
		}
	}
}

// A history that fits is summarised in one request, as before.
func TestSummariserOneRequestWhenItFits(t *testing.T) {
	hist := markedHistory(40, 200)
	client, err := llmtest.NewClient(scriptedSummaries(5), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sm := &summariser{model: Model{Client: client, ID: "s", ContextWindow: 100000}, budget: newSummaryBudget(100000, 0), hist: hist}
	res, err := sm.run(t.Context())
	if err != nil || res.requests != 1 || res.summary != "SUMMARY-1" {
		t.Fatalf("res = %+v, err %v", res, err)
	}
	if got := client.Requests()[0].Messages[1].Content; !strings.Contains(got, "conversation so far") || len(markers(got)) != 40 {
		t.Errorf("single request lacks the plain label or some messages (%d markers)", len(markers(got)))
	}
}

// A part the provider refuses as too long (its tokenizer counts more than
// Odin's estimate) is retried in smaller parts; nothing is skipped.
func TestSummariserShrinksWhenRefused(t *testing.T) {
	hist := markedHistory(400, 240)
	s := llmtest.NewScript().Add("compaction", llmtest.Step{Status: 400, Error: &llmtest.ErrorBody{
		Message: "too many tokens", Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages"}})
	for i := 1; i <= 50; i++ {
		s.Add("compaction", llmtest.Reply(fmt.Sprintf("SUMMARY-%d", i)))
	}
	client, err := llmtest.NewClient(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sm := &summariser{model: Model{Client: client, ID: "s", ContextWindow: 16000, MaxOutput: 1000}, budget: newSummaryBudget(16000, 1000), hist: hist}
	first := sm.budget
	res, err := sm.run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	reqs := client.RequestsFor("compaction")
	refused := llm.EstimateMessages(reqs[0].Messages)
	for k, r := range reqs[1:] {
		if size := llm.EstimateMessages(r.Messages); size > refused/2 {
			t.Errorf("request %d after the refusal: %d tokens, not within half the refused %d", k+2, size, refused)
		}
	}
	if res.requests != len(reqs) || res.summary != fmt.Sprintf("SUMMARY-%d", len(reqs)-1) {
		t.Fatalf("res = %+v after %d requests", res, len(reqs))
	}
	checkParts(t, reqs[1:], hist, first)
}

// A provider failure ends the compaction with an error naming the part;
// the requests already made are counted.
func TestSummariserFailure(t *testing.T) {
	hist := markedHistory(400, 240)
	s := llmtest.NewScript().Add("compaction", llmtest.Reply("SUMMARY-1"),
		llmtest.Step{Status: 400, Error: &llmtest.ErrorBody{Message: "bad request", Type: "invalid_request_error"}})
	client, err := llmtest.NewClient(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sm := &summariser{model: Model{Client: client, ID: "s", ContextWindow: 16000, MaxOutput: 1000}, budget: newSummaryBudget(16000, 1000), hist: hist}
	res, err := sm.run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "summarising messages") || res.requests != 2 || res.summary != "" {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
	// A window too small for the prompt itself fails at once, sending
	// nothing.
	sm = &summariser{model: Model{Client: client, ID: "s", ContextWindow: 600}, budget: newSummaryBudget(600, 0), hist: hist}
	if res, err := sm.run(t.Context()); err == nil || res.requests != 0 || len(client.Requests()) != 2 {
		t.Fatalf("tiny window: res = %+v, err = %v", res, err)
	}
}

// withHistory replaces the harness's session with one resuming hist.
func withHistory(t *testing.T, h *harness, hist []llm.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	sess, err := NewSession(h.deps, SessionOptions{ID: "s2", History: hist})
	if err != nil {
		t.Fatal(err)
	}
	h.sess = sess
}

// Cancel during a compaction by parts stops it between or inside parts:
// no further part is requested, and the history stays whole.
func TestCancelMidCompactionByParts(t *testing.T) {
	hist := markedHistory(400, 240) // ~24k tokens: several parts in a 6000-token window
	s := llmtest.NewScript().
		Add("compaction", llmtest.Reply("SUMMARY-1"), llmtest.Step{Hold: "part2", Text: "SUMMARY-2"}, llmtest.Reply("SUMMARY-3")).
		Add("orchestrator", llmtest.Step{When: "after", Text: "done"})
	h := newHarness(t, s, withWindow(6000), withConfig(func(c *config.Config) { c.Context.CompactAt = 0 }))
	withHistory(t, h, hist)
	compacted := make(chan *CompactResult, 1)
	go func() {
		res, err := h.sess.Compact(context.Background())
		if err != nil {
			res = &CompactResult{Err: err.Error()}
		}
		compacted <- res
	}()
	if err := h.client.WaitHeld(t.Context(), "part2"); err != nil {
		t.Fatal(err)
	}
	h.sess.Cancel("stop")
	if res := <-compacted; res.Err != "compaction cancelled" {
		t.Fatalf("compact = %+v", res)
	}
	h.client.Release("part2")
	h.sess.Submit("after", messages.ModeAsk)
	if r := h.turn(); r.Answer != "done" {
		t.Fatalf("turn = %+v", r)
	}
	if n := len(h.client.RequestsFor("compaction")); n != 2 {
		t.Errorf("%d summarisation requests, want 2 (none after the cancel)", n)
	}
	req := h.client.RequestsFor("orchestrator")[0]
	var sent strings.Builder
	for _, m := range req.Messages {
		sent.WriteString(m.Content)
	}
	if got := len(markers(sent.String())); got != len(hist) {
		t.Errorf("the request after a cancelled compaction holds %d of %d messages", got, len(hist))
	}
}

// A compaction that fails before a request that cannot fit ends the turn
// with the reason instead of sending the request; the history is kept.
func TestFailedCompactionDoesNotSendOverWindow(t *testing.T) {
	hist := markedHistory(400, 240) // ~24k tokens, over a 6000-token window
	s := llmtest.NewScript().
		Add("compaction", llmtest.Reply("SUMMARY-1"), llmtest.Step{Status: 400, Error: &llmtest.ErrorBody{Message: "nope", Type: "invalid_request_error"}}).
		Add("orchestrator", llmtest.Step{When: "next", Text: "never sent"})
	h := newHarness(t, s, withWindow(6000), withConfig(func(c *config.Config) { c.Context.CompactAt = 0.8 }))
	withHistory(t, h, hist)
	h.sess.Submit("next", messages.ModeAsk)
	r := h.turn()
	if r.Status != messages.TurnFailed || !strings.Contains(r.Error, "does not fit") || !strings.Contains(r.Error, "nope") {
		t.Fatalf("turn = %+v", r)
	}
	if n := len(h.client.RequestsFor("orchestrator")); n != 0 {
		t.Errorf("%d requests over the window were sent", n)
	}
}

// BenchmarkCompaction10k is what compacting a 10,000-message history
// (about 530k tokens) costs with a gpt-4o-mini-sized summariser (128k
// window, 16k output): the requests it takes and the tokens they carry.
func BenchmarkCompaction10k(b *testing.B) {
	hist := markedHistory(10_000, 240)
	m := Model{ID: "small-model", ContextWindow: 128000, MaxOutput: 16384}
	var res summaryResult
	for b.Loop() {
		client, err := llmtest.NewClient(scriptedSummaries(100), nil)
		if err != nil {
			b.Fatal(err)
		}
		m.Client = client
		sm := &summariser{model: m, budget: newSummaryBudget(m.ContextWindow, m.MaxOutput), hist: hist}
		if res, err = sm.run(context.Background()); err != nil {
			b.Fatal(err)
		}
		client.Close()
	}
	b.ReportMetric(float64(res.requests), "requests/op")
	b.ReportMetric(float64(res.sent), "tokens-sent/op")
	b.ReportMetric(float64(llm.EstimateMessages(hist)), "history-tokens")
}

// A huge tool result among the last messages, which compaction would keep
// verbatim, is summarised too, so that the request after compaction fits
// the window; the input being answered is always kept.
func TestCompactionKeepsWhatFits(t *testing.T) {
	hist := markedHistory(40, 240)
	hist = append(hist,
		llm.Message{Role: llm.RoleUser, Content: "<m00040> read the log"},
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "big", Name: "ReadFile", Arguments: `{"path":"/p/log"}`}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "big", Name: "ReadFile", Content: "<m00042> " + strings.Repeat("log line\n", 6000)},
		llm.Message{Role: llm.RoleAssistant, Content: "<m00043> the log is long"},
	)
	s := llmtest.NewScript().Add("orchestrator", llmtest.Step{When: "next", Text: "fits"})
	for i := 1; i <= 20; i++ {
		s.Add("compaction", llmtest.Reply(fmt.Sprintf("SUMMARY-%d", i)))
	}
	const window = 8000
	h := newHarness(t, s, withWindow(window), withConfig(func(c *config.Config) { c.Context.CompactAt = 0.8 }))
	withHistory(t, h, hist)
	h.sess.Submit("next", messages.ModeAsk)
	if r := h.turn(); r.Answer != "fits" {
		t.Fatalf("turn = %+v", r)
	}
	req := h.client.RequestsFor("orchestrator")[0]
	if size := llm.EstimateMessages(req.Messages) + llm.EstimateTools(req.Tools); size > window {
		t.Errorf("the request after compaction has %d tokens, over the window of %d", size, window)
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role != llm.RoleUser || !strings.Contains(last.Content, "next") {
		t.Errorf("the input was not kept: last message %+v", last)
	}
	if comp := h.client.RequestsFor("compaction"); !strings.Contains(fmt.Sprint(comp[len(comp)-1].Messages), "<m00042>") {
		t.Errorf("the huge tool result was kept verbatim instead of summarised")
	}
}

func TestFitCut(t *testing.T) {
	big := strings.Repeat("x", 4000) // 1000 tokens
	hist := []llm.Message{
		{Role: llm.RoleUser, Content: "q"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1"}}},
		{Role: llm.RoleTool, Content: big},
		{Role: llm.RoleAssistant, Content: "a"},
		{Role: llm.RoleUser, Content: big},
	}
	for _, c := range []struct {
		cut   int
		limit int64
		want  int
	}{
		{1, 5000, 1}, // fits: unchanged
		{1, 1100, 3}, // past the call and its result, not onto the result
		{1, 10, 4},   // never past the last user message
		{4, 10, 4},
	} {
		if got := fitCut(hist, c.cut, c.limit); got != c.want {
			t.Errorf("fitCut(cut %d, limit %d) = %d, want %d", c.cut, c.limit, got, c.want)
		}
	}
}

// A request the provider refuses as too long, whose compaction then fails,
// ends the turn saying so rather than "nothing left to compact"; the
// refused request is not retried as it was.
func TestOverflowWithFailedCompaction(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Step{Status: 400, Error: &llmtest.ErrorBody{Message: "too long", Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages"}}).
		Add("compaction", llmtest.Step{Status: 400, Error: &llmtest.ErrorBody{Message: "summariser down", Type: "invalid_request_error"}})
	h := newHarness(t, s)
	withHistory(t, h, markedHistory(40, 240))
	h.sess.Submit("next", messages.ModeAsk)
	r := h.turn()
	if r.Status != messages.TurnFailed || !strings.Contains(r.Error, "compacting the history failed") || !strings.Contains(r.Error, "summariser down") {
		t.Fatalf("turn = %+v", r)
	}
	if n := len(h.client.RequestsFor("orchestrator")); n != 1 {
		t.Errorf("%d orchestrator requests, want only the refused one", n)
	}
}

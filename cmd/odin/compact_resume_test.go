package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
)

// Windows of the scripted provider's two models, which it enforces and
// which odin.yaml tells Odin.
const (
	mainWindow  = 16000
	smallWindow = 8000
)

// compactEnv is a project whose odin.yaml points both models at a scripted
// provider that refuses requests over their windows.
type compactEnv struct {
	root  string
	g     *globalFlags
	model *llmtest.Server
}

func newCompactEnv(t *testing.T, script *llmtest.Script, mainTold, mainEnforced int) *compactEnv {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "proj")
	cfgDir := filepath.Join(work, "config", "odin")
	for _, d := range []string{root, cfgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.NewServer(t, script, llmtest.WithContextWindow(mainEnforced, "big-model"), llmtest.WithContextWindow(smallWindow, "small-model"))
	cfg := fmt.Sprintf("models:\n  main: big-model\n  small: small-model\nmodel_info:\n  big-model:\n    context_window: %d\n    max_output: 1000\n  small-model:\n    context_window: %d\n    max_output: 500\n", mainTold, smallWindow)
	if err := os.WriteFile(filepath.Join(cfgDir, "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	t.Setenv("OPENAI_BASE_URL", srv.URL())
	return &compactEnv{root: root, g: &globalFlags{dir: root, logLevel: "error"}, model: srv}
}

// storeSession writes hist as a stored session of the project, through
// the store the CLI opens, and returns its ID.
func (e *compactEnv) storeSession(t *testing.T, hist []llm.Message) string {
	t.Helper()
	a, err := loadApp(e.g)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := t.Context()
	st, err := a.openStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Imported in one transaction, as `odin sessions import` would: a
	// message at a time takes longer than the rest of the test.
	s := store.Session{ID: newID(), Project: a.root, Agent: store.AgentOrchestrator, Mode: "edit", Model: "big-model", CreatedAt: at}
	msgs := make([]store.Message, len(hist))
	for i, m := range hist {
		msgs[i] = actors.ToStoreMessage(s.ID, m, "", "", at.Add(time.Duration(i)*time.Millisecond))
		msgs[i].ID, msgs[i].Seq = fmt.Sprintf("msg-%05d", i), int64(i+1)
	}
	if err := st.Import(ctx, []store.SessionArchive{{Session: s, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// resume runs `odin run --resume id task` in process.
func (e *compactEnv) resume(t *testing.T, id, task string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := runTask(e.g, &runFlags{output: "text", quiet: true, resume: id}, task, &stdout, &stderr)
	if err != nil {
		t.Logf("stderr: %s", stderr.String())
	}
	return stdout.String(), err
}

// storedMessages reads the session back as the next resume would, and
// every message ever stored.
func (e *compactEnv) storedMessages(t *testing.T, id string) (resumable, all []store.Message) {
	t.Helper()
	a, err := loadApp(e.g)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.openStore(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if resumable, err = st.Messages(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if all, err = st.AllMessages(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	return resumable, all
}

// longHistory is n messages in rounds of four (question, tool call, its
// result, answer) of about 80 bytes each, every one holding its marker
// <mNNNNN>. Message huge (a question) is about 40 KB instead, more than
// the summariser's whole window, and ends with <tail>.
func longHistory(n, huge int) []llm.Message {
	out := make([]llm.Message, 0, n)
	fill := strings.Repeat("lorem ipsum ", 3)
	for i := range n {
		mark := fmt.Sprintf("<m%05d>", i)
		switch i % 4 {
		case 0:
			body := mark + " please look at module " + strconv.Itoa(i) + " " + fill
			if i == huge {
				body = mark + " a pasted log: " + strings.Repeat("log line of a very long paste\n", 1400) + "<tail>"
			}
			out = append(out, llm.Message{Role: llm.RoleUser, Content: body})
		case 1:
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: mark + " reading the file",
				ToolCalls: []llm.ToolCall{{ID: "call" + strconv.Itoa(i), Name: "ReadFile", Arguments: `{"path":"/p/f` + strconv.Itoa(i) + `.go"}`}}})
		case 2:
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: "call" + strconv.Itoa(i-1), Name: "ReadFile", Content: mark + " package p // " + fill})
		default:
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: mark + " done with it: " + fill})
		}
	}
	return out
}

var markRE = regexp.MustCompile(`<m(\d{5})>`)

func marks(s string) []int {
	var out []int
	for _, m := range markRE.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

func requestText(r llmtest.Request) string {
	var b strings.Builder
	for _, m := range r.Body.Messages {
		b.WriteString(m.Text())
		for _, c := range m.ToolCalls {
			b.WriteString(c.Function.Arguments)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkWindows asserts that the provider refused nothing and that no
// request it received was over its model's window.
func checkWindows(t *testing.T, srv *llmtest.Server, mainEnforced int) {
	t.Helper()
	for i, r := range srv.Requests() {
		w := int64(smallWindow)
		if r.Body.Model == "big-model" {
			w = int64(mainEnforced)
		}
		if r.Tokens > w || r.OverWindow {
			t.Errorf("request %d (%s, %s): about %d tokens, over the window of %d", i, r.Agent, r.Body.Model, r.Tokens, w)
		}
	}
}

// TestResumeHugeSessionCompactsInParts is issue 27: a stored session of
// 10,000 messages (about 25 times the summariser's window) is resumed with `odin run --resume`
// against a provider that enforces its windows. The history is compacted
// before the first request, in summarisation requests that each fit the
// small model's window, rolled up in order over every message; the turn
// then completes with the summary and the recent messages, and the store
// keeps every original message.
func TestResumeHugeSessionCompactsInParts(t *testing.T) {
	script := llmtest.NewScript().Add("orchestrator", llmtest.Step{When: "MARK-FINAL", Text: "resumed fine"})
	for i := 1; i <= 200; i++ {
		script.Add("compaction", llmtest.Reply(fmt.Sprintf("SUMMARY-%d", i)))
	}
	e := newCompactEnv(t, script, mainWindow, mainWindow)
	const n, huge = 10_000, 5000
	hist := longHistory(n, huge)
	id := e.storeSession(t, hist)
	out, err := e.resume(t, id, "go on MARK-FINAL")
	if err != nil || !strings.Contains(out, "resumed fine") {
		t.Fatalf("odin run --resume: %v; stdout %q", err, out)
	}
	checkWindows(t, e.model, mainWindow)

	comp := e.model.RequestsFor("compaction")
	orch := e.model.RequestsFor("orchestrator")
	if len(comp) < 2 || len(orch) != 1 {
		t.Fatalf("%d summarisation and %d orchestrator requests, want several and one", len(comp), len(orch))
	}
	// Every message is in exactly one part, in order, each tool call in
	// the part of its result, and each part carries the summary so far.
	part := map[int]int{}
	last := -1
	var sent int64
	for k, r := range comp {
		sent += r.Tokens
		text := requestText(r)
		if k > 0 && !strings.Contains(text, fmt.Sprintf("SUMMARY-%d", k)) {
			t.Errorf("part %d does not carry the summary of the parts before it", k+1)
		}
		for _, m := range marks(text) {
			if m <= last {
				t.Fatalf("part %d: message %d after message %d", k+1, m, last)
			}
			last, part[m] = m, k
		}
	}
	if !strings.Contains(requestText(comp[part[huge]]), "bytes of this message were cut here") || !strings.Contains(requestText(comp[part[huge]]), "<tail>") {
		t.Errorf("the oversize message was not cut with a marker, keeping its end")
	}
	final := orch[0].Body.Messages
	summary := final[1].Text()
	// The Orchestrator's role heads its first user message (issue 37).
	if _, rest, ok := strings.Cut(summary, "\n# Conversation\n"); ok && strings.HasPrefix(summary, "# Your role\n") {
		summary = rest
	}
	if !strings.Contains(summary, fmt.Sprintf("SUMMARY-%d", len(comp))) || !strings.HasPrefix(summary, "This session was compacted") {
		t.Errorf("the first request's history starts with %q, not the last summary", summary[:min(len(summary), 120)])
	}
	for _, m := range marks(requestText(orch[0])) {
		if _, dup := part[m]; dup {
			t.Errorf("message %d both summarised and sent verbatim", m)
		}
		part[m] = -1
	}
	for i, m := range hist {
		k, ok := part[i]
		if !ok {
			t.Fatalf("message %d was neither summarised nor kept", i)
		}
		if m.Role == llm.RoleTool && part[i-1] != k {
			t.Errorf("tool result %d apart from its call", i)
		}
	}

	// The next resume starts at the summary; nothing was deleted.
	resumable, all := e.storedMessages(t, id)
	if len(resumable) == 0 || !strings.Contains(fmt.Sprint(resumable[0].Parts), fmt.Sprintf("SUMMARY-%d", len(comp))) {
		t.Errorf("the stored history does not start at the summary")
	}
	seen := map[int]bool{}
	for _, m := range all {
		for _, k := range marks(fmt.Sprint(m.Parts)) {
			seen[k] = true
		}
	}
	if len(seen) != n {
		t.Errorf("the store holds %d of the %d original messages", len(seen), n)
	}
	var histTokens int64 = llm.EstimateMessages(hist)
	t.Logf("%d messages (~%d tokens): %d summarisation requests, %d tokens sent to the summariser (%.2f× the history)",
		n, histTokens, len(comp), sent, float64(sent)/float64(histTokens))
}

// A provider that counts more than Odin was told refuses a normal turn's
// request with 400 context_length_exceeded: Odin compacts (in parts) and
// retries once, and the turn completes. A part that meets a passing
// server error is retried by the client, not lost.
func TestContextExceededCompactsAndRetries(t *testing.T) {
	script := llmtest.NewScript().Add("orchestrator", llmtest.Step{When: "MARK-FINAL", Text: "retried fine"})
	script.Add("compaction", llmtest.Reply("SUMMARY-1"), llmtest.Step{Status: 503})
	for i := 2; i <= 50; i++ {
		script.Add("compaction", llmtest.Reply(fmt.Sprintf("SUMMARY-%d", i)))
	}
	const enforced = 6000
	// Odin believes in 200k tokens, so ~20k tokens of history look fine
	// to it; the provider stops at 6k.
	e := newCompactEnv(t, script, 200000, enforced)
	hist := longHistory(1000, -1)
	id := e.storeSession(t, hist)
	out, err := e.resume(t, id, "go on MARK-FINAL")
	if err != nil || !strings.Contains(out, "retried fine") {
		t.Fatalf("odin run --resume: %v; stdout %q", err, out)
	}
	orch := e.model.RequestsFor("orchestrator")
	if len(orch) != 2 || !orch[0].OverWindow || orch[1].OverWindow || orch[1].Tokens > enforced {
		t.Fatalf("orchestrator requests: %d, want a refused one and its retry within the window", len(orch))
	}
	if n := e.model.OverWindow(); n != 1 {
		t.Errorf("%d requests refused, want only the first", n)
	}
	comp := e.model.RequestsFor("compaction")
	if len(comp) < 3 || !strings.Contains(orch[1].Body.Messages[1].Text(), fmt.Sprintf("SUMMARY-%d", len(comp)-1)) {
		t.Fatalf("%d summarisation requests; the retry does not start with the last summary", len(comp))
	}
	// The part that met the 503 was sent again, whole.
	if a, b := marks(requestText(comp[1])), marks(requestText(comp[2])); len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the part after the server error was not the same part again")
	}
}

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// minPrefixShare is how much of a request the next request of the same
// conversation must repeat, byte for byte, from the start (issue #18):
// providers cache prompts by prefix, so anything volatile early in the
// prompt (a time, the todo list, a queue) makes every later token full
// price.
const minPrefixShare = 0.95

// checkPromptPrefix asserts the prefix property on recorded requests (see
// prefixViolations); each agent named must have had at least one pair of
// consecutive requests in one conversation. It returns the pairs checked,
// per agent.
func checkPromptPrefix(t *testing.T, reqs []llmtest.Request, agents ...string) map[string]int {
	t.Helper()
	bad, pairs := prefixViolations(reqs)
	for _, b := range bad {
		t.Error(b)
	}
	for _, a := range agents {
		if pairs[a] == 0 {
			t.Errorf("no two consecutive requests of %s in one conversation were recorded", a)
		}
	}
	return pairs
}

// prefixViolations checks that in each conversation (an agent's requests
// that share their first user message: an Orchestrator session, one
// specialist task) every request starts with at least minPrefixShare of
// the previous one, as the provider lays the prompt out
// (llmtest.PromptText: system, tools, then messages). It returns one line per
// violation and the pairs checked, per agent.
func prefixViolations(reqs []llmtest.Request) (bad []string, pairs map[string]int) {
	type conv struct{ agent, first string }
	last := map[conv]string{}
	pairs = map[string]int{}
	for _, r := range reqs {
		first := ""
		for _, m := range r.Body.Messages {
			if m.Role == "user" {
				first = m.Text()
				break
			}
		}
		k := conv{r.Agent, first}
		prompt := llmtest.PromptText(r.Body)
		if prev, ok := last[k]; ok {
			pairs[r.Agent]++
			n := llmtest.CommonPrefix(prev, prompt)
			if share := float64(n) / float64(len(prev)); share < minPrefixShare {
				bad = append(bad, fmt.Sprintf("%s request (step %d) repeats only %.1f%% of the previous one as a prefix (want >= %.0f%%); they part at byte %d:\nprevious: %.200q\nthis:     %.200q",
					r.Agent, r.Step, 100*share, 100*minPrefixShare, n, prev[n:], prompt[n:]))
			}
		}
		last[k] = prompt
	}
	return bad, pairs
}

// The check fails a prompt whose system message carries a clock ahead of
// the conversation, and passes one that only grows at the end.
func TestPrefixViolations(t *testing.T) {
	req := func(system string, turns int) llmtest.Request {
		var r llmtest.Request
		r.Agent = "orchestrator"
		r.Body.Tools = make([]llmtest.ChatTool, 1)
		r.Body.Tools[0].Type = "function"
		r.Body.Tools[0].Function.Name = "ReadFile"
		r.Body.Tools[0].Function.Parameters = []byte(`{"type":"object"}`)
		r.Body.Messages = append(r.Body.Messages, llmtest.ChatMessage{Role: "system", Content: []byte(fmt.Sprintf("%q", system))})
		for i := range turns {
			r.Body.Messages = append(r.Body.Messages,
				llmtest.ChatMessage{Role: "user", Content: []byte(fmt.Sprintf("%q", strings.Repeat("the task ", 200)))},
				llmtest.ChatMessage{Role: "assistant", Content: []byte(fmt.Sprintf(`"answer %d"`, i))})
		}
		return r
	}
	stable := []llmtest.Request{req("You are Odin.", 1), req("You are Odin.", 2), req("You are Odin.", 3)}
	if bad, pairs := prefixViolations(stable); len(bad) > 0 || pairs["orchestrator"] != 2 {
		t.Errorf("append-only conversation: violations %q, pairs %v", bad, pairs)
	}
	clock := []llmtest.Request{req("Time: 10:00:01. You are Odin.", 1), req("Time: 10:00:02. You are Odin.", 2)}
	if bad, _ := prefixViolations(clock); len(bad) != 1 {
		t.Errorf("a clock in the system prompt: violations %q, want one", bad)
	}
}

// A session continued in a new process (odin run -c) sends the stored
// history back as it was sent before, so the provider's cache still holds
// the prefix: store round trips must not re-encode messages or tool calls.
func TestPromptPrefixAcrossContinue(t *testing.T) {
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("ReadFile", map[string]any{"file_path": filepath.Join(work, "main.go")})),
		llmtest.Reply("main.go has an empty main."),
		llmtest.Calls(llmtest.Call("Grep", map[string]any{"pattern": "func", "path": work, "output_mode": "content"})),
		llmtest.Reply("One function: main."))
	srv := llmtest.NewServer(t, script)
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1",
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	for _, args := range [][]string{{"run", "-q", "what is in main.go?"}, {"run", "-q", "-c", "and how many functions?"}} {
		cmd := exec.Command(filepath.Join(binDir, "odin"), args...)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("odin %v: %v\n%s", args, err, out)
		}
	}
	if pairs := checkPromptPrefix(t, srv.Requests(), "orchestrator"); pairs["orchestrator"] != 3 {
		t.Errorf("orchestrator pairs = %d, want 3 (4 requests in one conversation)", pairs["orchestrator"])
	}
}

// userWords is a user message as the user typed it: the Orchestrator's
// first user message carries its role before "# Conversation" (issue 37:
// the system message is the preamble every agent of a session shares).
func userWords(text string) string {
	if _, rest, ok := strings.Cut(text, "\n# Conversation\n"); ok && strings.HasPrefix(text, "# Your role\n") {
		return rest
	}
	return text
}

package llm_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// ignoreLedger leaves the token ledger out of the tests that pin what a
// response decodes to; TestLedgerOfRealRequests checks it.
var ignoreLedger = cmpopts.IgnoreFields(llm.Response{}, "Parts")

// The ledger of real requests through the scripted server's prefix cache:
// each part's tokens are its estimate, they add up to the prompt the
// server counted, and the cached tokens the server reported fill the parts
// from the start of the request (system, tools, then the messages): the
// second request of a conversation has its system prompt and tools cached,
// its new input not.
func TestLedgerOfRealRequests(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("code", llmtest.Reply("one"), llmtest.Reply("two")), llmtest.WithPromptCache())
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL(), MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})

	system := llm.Message{Role: llm.RoleSystem, Content: strings.Repeat("the rules every specialist shares. ", 150)}
	tools := []llm.ToolDef{{Name: "ReadFile", Description: strings.Repeat("reads a file. ", 100), Parameters: []byte(`{"type":"object"}`)}}
	typed := "add rate limiting"
	first := llm.Message{Role: llm.RoleUser, Content: "<repo_map>" + strings.Repeat("api/server.go ", 40) + "</repo_map>\n" + typed, Typed: typed}
	call := func(msgs ...llm.Message) (*llm.Response, llmtest.Request) {
		t.Helper()
		r, err := c.Stream(t.Context(), llm.Request{Model: "m", Agent: "code", Messages: msgs, Tools: tools}, nil)
		if err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		return r, reqs[len(reqs)-1]
	}
	part := func(r *llm.Response, name string) llm.PartTokens {
		for _, p := range r.Parts {
			if p.Part == name {
				return p
			}
		}
		t.Fatalf("no %s part in %+v", name, r.Parts)
		return llm.PartTokens{}
	}
	check := func(r *llm.Response, got llmtest.Request) {
		t.Helper()
		var sum, cached int64
		for _, p := range r.Parts {
			sum += p.Tokens
			cached += p.Cached
			if p.Cached > p.Tokens {
				t.Errorf("%s: %d cached of %d", p.Part, p.Cached, p.Tokens)
			}
		}
		if sum != got.Tokens || sum != r.Usage.PromptTokens {
			t.Errorf("parts sum to %d; the server counted %d, usage says %d", sum, got.Tokens, r.Usage.PromptTokens)
		}
		if cached != r.Usage.CachedTokens {
			t.Errorf("parts have %d cached, usage %d", cached, r.Usage.CachedTokens)
		}
	}

	r1, got1 := call(system, first)
	check(r1, got1)
	if want := llm.EstimateMessages([]llm.Message{system}); part(r1, llm.PartSystem).Tokens != want {
		t.Errorf("system: %d tokens, want %d", part(r1, llm.PartSystem).Tokens, want)
	}
	if want := llm.EstimateTools(tools); part(r1, llm.PartTools).Tokens != want {
		t.Errorf("tools: %d tokens, want %d", part(r1, llm.PartTools).Tokens, want)
	}
	if ctx := part(r1, llm.PartContext).Tokens; ctx < 100 {
		t.Errorf("the repo map Odin added counts %d context tokens, want its size", ctx)
	}
	if r1.Usage.CachedTokens != 0 || part(r1, llm.PartHistory).Tokens != 0 {
		t.Errorf("first request: %d cached, %d history", r1.Usage.CachedTokens, part(r1, llm.PartHistory).Tokens)
	}

	r2, got2 := call(system, first, llm.Message{Role: llm.RoleAssistant, Content: "one"}, llm.Message{Role: llm.RoleUser, Content: "now the tests"})
	check(r2, got2)
	if r2.Usage.CachedTokens == 0 {
		t.Fatal("second request: nothing cached")
	}
	for _, name := range []string{llm.PartSystem, llm.PartTools} {
		if p := part(r2, name); p.Cached != p.Tokens {
			t.Errorf("second request: %s %d of %d cached, want all", name, p.Cached, p.Tokens)
		}
	}
	if p := part(r2, llm.PartInput); p.Tokens == 0 || p.Cached != 0 {
		t.Errorf("second request: input %+v, want uncached new input", p)
	}
	if p := part(r2, llm.PartHistory); p.Tokens == 0 {
		t.Errorf("second request: no history")
	}
}

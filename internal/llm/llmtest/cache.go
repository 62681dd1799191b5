package llmtest

import (
	"encoding/json"
	"sync"
)

// PromptText is a request's prompt in the order a provider lays it out for
// its prefix cache: the leading system messages, then the tool
// definitions, then the other messages in order. That is the layout of
// OpenAI's harmony format (the developer message holds the instructions,
// then the tools) and of the chat templates of open models (Qwen's puts
// the tools after the system text). Two requests can share a provider's
// cached prompt only as far as their PromptTexts share a prefix.
func PromptText(r ChatRequest) string {
	var b []byte
	msgs := r.Messages
	for len(msgs) > 0 && msgs[0].Role == "system" {
		j, _ := json.Marshal(msgs[0])
		b = append(b, j...)
		msgs = msgs[1:]
	}
	for _, t := range r.Tools {
		j, _ := json.Marshal(t)
		b = append(b, j...)
	}
	for _, m := range msgs {
		j, _ := json.Marshal(m)
		b = append(b, j...)
	}
	return string(b)
}

// CommonPrefix returns the length in bytes of the longest common prefix of
// a and b.
func CommonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Automatic prefix caching as OpenAI describes it: a prompt of at least
// 1024 tokens is cached in blocks of 128 tokens.
const (
	cacheMinTokens   = 1024
	cacheBlockTokens = 128
	// cacheDepth is how many recent prompts are remembered.
	cacheDepth = 64
)

// promptCache simulates a provider's prefix cache (WithPromptCache): the
// tokens of a request served from the cache are those of its longest
// common prefix with an earlier prompt of the run to the same model,
// whichever agent sent it. A provider caches per account, not per
// conversation: a prefix one agent sent serves every other request that
// starts with the same bytes. But the cache holds a model's attention
// state, which no other model can use, so two models never share it.
type promptCache struct {
	mu     sync.Mutex
	recent []cachedPrompt // the last prompts, newest last
}

type cachedPrompt struct {
	model, prompt string
}

// cached returns how many of prompt's tokens (total: its estimate) a
// provider would have served from its cache for model, and remembers
// prompt.
func (c *promptCache) cached(model, prompt string, total int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	best := 0
	for _, p := range c.recent {
		if p.model == model {
			best = max(best, CommonPrefix(p.prompt, prompt))
		}
	}
	c.recent = append(c.recent, cachedPrompt{model, prompt})
	if n := len(c.recent); n > cacheDepth {
		c.recent = c.recent[n-cacheDepth:]
	}
	// The prefix's share of the estimated prompt, in whole blocks.
	tok := total * int64(best) / int64(max(len(prompt), 1))
	tok -= tok % cacheBlockTokens
	if tok < cacheMinTokens {
		return 0
	}
	return min(tok, total)
}

// WithPromptCache makes the estimated usage report cached prompt tokens
// (prompt_tokens_details.cached_tokens) as a provider's automatic prefix
// cache would, so that a run shows what prompt caching saves. Steps with
// their own Usage are sent as written.
func WithPromptCache() ServerOption {
	return func(c *serverConfig) { c.cache = &promptCache{} }
}

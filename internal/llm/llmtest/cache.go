package llmtest

import (
	"encoding/json"
	"sync"
)

// PromptText is a request's prompt in the order a provider lays it out for
// its prefix cache: the tool definitions first (OpenAI and the chat
// templates of open models render them into the system section), then
// every message in order. Two requests can share a provider's cached
// prompt only as far as their PromptTexts share a prefix.
func PromptText(r ChatRequest) string {
	var b []byte
	for _, t := range r.Tools {
		j, _ := json.Marshal(t)
		b = append(b, j...)
	}
	for _, m := range r.Messages {
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
	// cacheDepth is how many recent prompts per agent are remembered.
	cacheDepth = 16
)

// promptCache simulates a provider's prefix cache (WithPromptCache): the
// tokens of a request served from the cache are those of its longest
// common prefix with an earlier prompt of the same agent.
type promptCache struct {
	mu     sync.Mutex
	recent map[string][]string // agent -> its last prompts, newest last
}

// cached returns how many of prompt's tokens (total: its estimate) a
// provider would have served from its cache, and remembers prompt.
func (c *promptCache) cached(agent, prompt string, total int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recent == nil {
		c.recent = map[string][]string{}
	}
	best := 0
	for _, p := range c.recent[agent] {
		best = max(best, CommonPrefix(p, prompt))
	}
	c.recent[agent] = append(c.recent[agent], prompt)
	if n := len(c.recent[agent]); n > cacheDepth {
		c.recent[agent] = c.recent[agent][n-cacheDepth:]
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

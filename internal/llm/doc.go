// Package llm is Odin's provider-neutral view of a chat model: requests,
// streamed events, accumulated responses, usage and classified errors, plus the
// adapter that speaks the OpenAI Chat Completions wire protocol through
// openai-go (the only package that imports it).
//
// A Client is safe for concurrent use; each Stream call is independent,
// except that the calls of one provider may share a rate limit (RateLimits,
// Limiter): they queue for its quota and a 429 pauses all of them.
package llm

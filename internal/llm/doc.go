// Package llm is Odin's provider-neutral view of a chat model: requests,
// streamed events, accumulated responses, usage and classified errors, plus the
// adapter that speaks the OpenAI Chat Completions wire protocol through
// openai-go (the only package that imports it).
//
// A Client is safe for concurrent use; each Stream call is independent.
package llm

// Package llm is Odin's provider-neutral view of a chat model: requests,
// streamed events, accumulated responses, usage and classified errors, plus the
// adapter that speaks the OpenAI Chat Completions wire protocol through
// openai-go (the only package that imports it). The adapter encodes request
// bodies itself, from plain structs, with each tool definition encoded once
// per client: openai-go's reflective encoder cost more per request than
// everything else a fan-out specialist does.
//
// A Client is safe for concurrent use; each Stream call is independent,
// except that the calls of one provider may share a rate limit (RateLimits,
// Limiter): they queue for its quota and a 429 pauses all of them.
//
// Images (Message.Images) travel as base64 data URLs in content parts; the
// images of tool results, which Chat Completions tool messages cannot hold,
// follow the tool messages in one user message, and a TextOnly request
// replaces every image by its label. NewImage and ReadImage sniff and cap
// what may be sent.
package llm

// Package llmtest provides Odin's scripted model: a Script of canned turns
// per agent, served either by an OpenAI-compatible HTTP server (real HTTP
// and SSE, with latency, faults — errors, cut or stalled streams, error
// objects mid-stream, a provider's per-second quota answered with 429 —
// and provider quirks) or by an in-process
// Client implementing llm.Client.
//
// Every Odin test and the offline demo use it as "the model". A Script
// lists steps per agent (routed by the X-Odin-Agent header); each request
// consumes the first unused step whose `when` matches, so a test reads as
// the conversation it expects. Servers record every request so tests can
// assert what Odin sent.
//
// Server and Client are safe for concurrent use. Serve has no testing
// dependency and backs cmd/scripted-model; NewServer is the testing.TB
// convenience that closes the server when the test ends.
package llmtest

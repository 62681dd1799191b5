// Package serve is Odin's HTTP API: many sessions in one process, each an
// Orchestrator behind an Opener, driven with JSON requests and watched as
// Server-Sent Events (resumable with Last-Event-ID). Idle sessions are
// passivated — closed, so their history is in the store — and restored on
// their next message. Every request needs the bearer token; the API is
// described by the OpenAPI document it serves at /openapi.yaml.
package serve

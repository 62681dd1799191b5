// Package serve is Odin's HTTP API: many sessions in one process, each an
// Orchestrator behind an Opener, driven with JSON requests and watched as
// Server-Sent Events (resumable with Last-Event-ID). Idle sessions are
// passivated — closed, so their history is in the store — and restored on
// their next message. Every API request needs the bearer token; the API is
// described by the OpenAPI document it serves at /openapi.yaml. The web
// viewer's page (internal/viewer) is served at / without the token: it holds
// no data and reads the API with the token from its URL fragment.
package serve

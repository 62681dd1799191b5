// Package metrics keeps process-wide counters and histograms and writes
// them in the Prometheus text exposition format (version 0.0.4), for odin
// serve's /metrics. It imports no other Odin package, so that the store
// and the model client can count what they do without depending on the
// server.
//
// Instruments are created once, at package initialisation, and registered
// by name; updating one is a few atomic operations and never blocks.
package metrics

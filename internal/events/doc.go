// Package events is the session event bus: a non-blocking broadcaster of
// messages.Envelope values to any number of subscribers (the REPL, the JSON
// stream writer, the store). Publish never blocks on a slow subscriber.
package events

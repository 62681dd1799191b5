// Package events is the session event bus: a non-blocking broadcaster of
// messages.Envelope values to any number of subscribers (the REPL, the JSON
// stream writer of `odin run`, the web viewer, ACP, the cluster grain; the
// journal writes the store itself). Publish never blocks on a slow
// subscriber, and a lagging lossless subscriber loses only events it can
// do without, never the end of a turn or of the session.
package events

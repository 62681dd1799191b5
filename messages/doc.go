// Package messages is Odin's actor protocol and event vocabulary: plain
// structs for user input, delegation requests and reports, structured
// specialist results, and the typed events the UI, the JSON stream and the
// store subscribe to. It has no behaviour and imports no other Odin package.
//
// Messages are sent by pointer and never mutated after sending.
package messages

// Package store persists Odin's sessions: their messages with typed parts,
// tool history, todos, token usage and cost, undo checkpoints and a small
// cache for web fetches.
//
// The Store interface is the contract; SQLite (opened with Open) is the
// backend, on a single file shared by every Odin process of the user
// (several terminals may use it at once). The conformance suite in
// storetest pins the contract so another backend can be added later.
//
// Everything is keyed by project root, an absolute path. Writes commit as
// they happen: each AppendMessage is its own transaction, so a process
// killed mid-turn loses at most the reply it had not yet appended, and
// Messages repairs what such a crash leaves behind (a tool call without its
// result) so the next model request is always valid.
//
// Several processes may read a session, but one writes it: AcquireLease
// takes a session's lease (an flock beside the database, released by the
// kernel when its holder dies) and names the holder to whoever is refused.
//
// Export, ExportJSONL, ExportMarkdown and ImportJSONL work on any Store.
package store

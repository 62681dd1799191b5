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
//
// # Two backends, one code path
//
// Postgres (OpenPostgres) is the second backend, for sessions shared by
// several hosts; OpenURL picks one from a URL. Both run the same ~2,500
// lines of queries through database/sql: pgx's pool is seen through
// stdlib's connector, wrapped so that every query's '?' placeholders
// become $1, $2... Writing the store twice would let the two drift apart
// on every later change; the conformance suite (storetest) runs against
// both and holds them to one contract. The queries keep to what both
// dialects accept (ON CONFLICT upserts, RETURNING, SAVEPOINT, NULLIF,
// VALUES with a subquery); the few differences are explicit hooks:
//   - the two-argument maximum: greatest() (MAX vs GREATEST);
//   - DDL: a PostgreSQL migration set (migrations_pg) beside SQLite's, with
//     the same versions, BIGINT for nanosecond times, BYTEA for blobs,
//     identity columns for SQLite's INTEGER PRIMARY KEY and for the
//     implicit rowid some listings order by (a column named rowid);
//   - locking: SQLite serializes every writer on the file (BEGIN
//     IMMEDIATE, one writer connection, cached prepared statements —
//     all SQLite-only); PostgreSQL runs concurrent READ COMMITTED
//     transactions from its pool, and a write that reads then writes a
//     session's rows first locks the session row (lockSession).
//     AppendMessage updates the session row before drawing the next
//     sequence number, so that row lock orders concurrent appenders and
//     the numbers stay unique and gap-free;
//   - errors: a unique violation is SQLITE_CONSTRAINT_* or SQLSTATE 23505;
//     a PostgreSQL transaction aborted as a serialization failure (40001)
//     or a deadlock (40P01) is run again a few times (retrySerialization).
//
// Claim (fence.go, both backends) fences a session's writers: a claim
// bumps the session's epoch, and a write through an older claim fails
// with ErrFenced inside its own transaction, having written nothing.
//
// Inputs (inputs.go, both backends) is the input ledger: an input is stored
// as accepted under its caller's ID before it runs, its user message
// carries that ID, and FinishInput writes the final reply and the done mark
// in one transaction, so that a repeated delivery is recognised and a turn
// a crash interrupted is found (and its partial reply marked interrupted,
// out of Messages) when the session is next opened.
package store

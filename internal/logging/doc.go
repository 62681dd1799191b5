// Package logging sets up Odin's log: zerolog writing to a file under the
// state directory (never to the user's terminal), and a slog.Handler over
// the same logger for libraries that log through slog — protoactor's
// LoggerFactory among them.
package logging

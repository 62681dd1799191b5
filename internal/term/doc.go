// Package term is Odin's terminal front end: the interactive REPL that
// drives a session (line editor with history and multi-line input, inline
// streaming Markdown, coloured diffs, a live status area for the running
// specialists and quality gates, inline approvals, type-ahead queue, slash
// commands, a completion menu for /commands and @file mentions, whose
// files are attached to the message), and its plain line mode for when stdin or stdout is not a
// terminal.
//
// The design is inline, like Claude Code's, not full-screen: finished output
// is printed above a small live area (status, queue, approval prompt, input),
// so the terminal's scrollback keeps the whole conversation and a test can
// read the session from a pseudo-terminal. Bubble Tea runs the live area;
// its renderer redraws only the lines that changed.
//
// Text from models, tools, files and the store is sanitized (termsafe)
// before Odin styles it, and every printed line and the live area pass
// termsafe.Styled, so the terminal receives Odin's SGR styling and no other
// control sequence; line mode writes none at all.
//
// The package knows a session only through the Session interface, and the
// commands that need the rest of Odin (/undo, /init, /resume...) through
// Command values supplied by the caller. Run owns the terminal until it
// returns; nothing here is safe for use by two Runs at once, but a Run is
// safe against events arriving from any goroutine.
package term

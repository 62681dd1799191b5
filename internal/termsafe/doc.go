// Package termsafe removes terminal control sequences from untrusted text
// (model output, tool output, diffs, file names, stored transcripts) before
// a front end writes it to a terminal.
//
// A model or a file it reads can carry escape sequences that act on the
// user's terminal rather than show as text: OSC 52 writes the clipboard,
// OSC 8 disguises a link, CSI 2J clears the screen, DCS/APC/PM/SOS strings
// talk to the terminal itself, 8-bit C1 controls (U+009B is CSI) do the same
// without an ESC, and bidirectional overrides (U+202A–U+202E, U+2066–U+2069,
// the "Trojan Source" class) make code read differently from what it is.
// Text and Line drop all of them: C0 controls except newline and tab, DEL,
// every C1 control, every ESC sequence with its payload, and they replace
// bidi controls with a visible <U+XXXX>. Odin's own styling is applied
// after sanitizing, so its colours survive and the model's never do.
//
// charmbracelet/x/ansi's Strip is not used: it keeps C0 controls (BEL,
// backspace, carriage return) and lets a UTF-8 encoded C1 control such as
// U+009B through, and it swallows the rest of the text after an unterminated
// OSC, which would lose content.
//
// The functions are pure and safe for concurrent use.
package termsafe

// Package present is the one place that decides how Odin's session events
// read: the words of each event line, gate rounds, costs, durations, token
// counts and plurals. The terminal (internal/term), headless `odin run`
// (cmd/odin) and the web viewer (internal/viewer, through internal/serve)
// take their words and numbers from it and only style them: ANSI colour,
// plain text or HTML. Before it each front end formatted the bus events in
// its own switch and they drifted apart (a QA round numbered 1 in one and
// 2 in another, "1 fix round(s)" beside "1 fix round").
//
// Describe turns one event into a Line: a list of spans, each with a Tone
// a front end maps to its own style, plus the numbers (gate round, cost)
// that tests and the viewer read. Everything in a Line that came from a
// model, a tool or the repository is sanitized (termsafe.Line): a Line is
// safe to print on a terminal and to put in a DOM text node. The package
// holds no state and is safe for concurrent use.
package present

// Package helperproc runs Odin's helper processes — odin-fetch,
// odin-browser, odin-sitter — and speaks their protocol: one JSON object
// a line each way over the helper's stdin and stdout.
//
// The client side (Client) starts the helper through the sandbox on first
// use, multiplexes calls over the one pipe by ID, serves the requests the
// helper makes of Odin while a call runs (the helpers have no network:
// every request goes through Odin's own policy), reports a helper that
// died with the last line it wrote to stderr, starts a new one on the
// next call, and stops it on Close. The helper side (Serve) reads calls,
// runs them concurrently or one at a time, routes Odin's answers to the
// requests it made, and when Odin goes, fails those requests and waits
// for its calls.
//
// A protocol keeps its own message type: it implements Message, which
// says what a line is (Route) and sets its routing fields (Routed); the
// payload is the protocol's business.
//
// No helper ever runs outside a sandbox: without a Launch the Client
// starts helpers through a launcher that uses bubblewrap, else Landlock,
// and otherwise refuses, naming why and how to fix it.
package helperproc

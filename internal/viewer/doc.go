// Package viewer is Odin's web viewer: a page, embedded in the binary, that
// odin serve hands to a browser and that reads only serve's JSON and SSE
// API. It shows the sessions, a run's timeline (one lane per agent, gate
// stages and fix rounds, live while the run goes), each run's transcript
// with its diffs, the gates' findings and verdicts, cost, and the pending
// approvals, which it can answer.
//
// The page is plain JavaScript modules with no build step and no
// third-party code. The bearer token reaches it in the URL fragment (never
// sent to a server) and goes with every request as an Authorization
// header; that rules out EventSource (and htmx's SSE extension built on
// it), which cannot send headers, so events are read from a fetch stream.
package viewer

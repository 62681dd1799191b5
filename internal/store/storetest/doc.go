// Package storetest is the conformance suite every store.Store backend must
// pass: Run exercises each method's contract (ordering, summary cut-off,
// dangling tool-call repair, cascading delete, first-snapshot-wins
// checkpoints, the cache, stats grouping, concurrent appends and the
// export/import round trip) against fresh stores made by the backend.
package storetest

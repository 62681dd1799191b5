//go:build race

package search

// raceEnabled shrinks the parity corpus: the race detector makes a search
// of the whole Go tree take minutes.
const raceEnabled = true

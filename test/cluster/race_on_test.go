//go:build race

package cluster

// raceTest: this test binary has the race detector, so the odin it builds
// for its nodes gets it too (see checkRaces).
const raceTest = true

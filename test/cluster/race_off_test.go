//go:build !race

package cluster

const raceTest = false

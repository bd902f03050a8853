//go:build race

package stream

// raceEnabled: the race detector multiplies memory use.
const raceEnabled = true

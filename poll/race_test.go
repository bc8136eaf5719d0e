//go:build race

package poll

func init() { raceEnabled = true }

//go:build !linux && !darwin

package cpu

// physicalCores is unknown here: DefaultThreads falls back to GOMAXPROCS.
func physicalCores() int { return 0 }

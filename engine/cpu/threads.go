package cpu

import (
	"runtime"
	"sync"
)

// DefaultThreads is the worker count used when none is given: the physical
// cores this process may run on (performance cores on hybrid CPUs), at most
// GOMAXPROCS. A second hyperthread of a core adds no SIMD units to these
// kernels but adds a worker that every dispatch waits for, and efficiency
// cores finish their static share last.
func DefaultThreads() int {
	defaultThreadsOnce.Do(func() {
		n := physicalCores()
		if g := runtime.GOMAXPROCS(0); n <= 0 || n > g {
			n = g
		}
		defaultThreads = max(1, n)
	})
	return defaultThreads
}

var (
	defaultThreadsOnce sync.Once
	defaultThreads     int
)

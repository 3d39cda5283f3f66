package cpu

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type countTask struct {
	hits []atomic.Int32
}

func (c *countTask) Do(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

// Both wait modes: polling (spinHold) and parking at once (every CPU taken).
func TestPoolCoversEveryItemOnce(t *testing.T) {
	for _, workers := range []int{1, 2, 5, -2, -5} {
		p := newPool(workers, spinHold)
		if workers < 0 {
			p = newPool(-workers, 0)
		}
		for _, n := range []int{1, 7, 64, 1001} {
			for _, grain := range []int{1, 3, 64, 5000} {
				c := &countTask{hits: make([]atomic.Int32, n)}
				p.Run(n, grain, c)
				for i := range c.hits {
					require.Equal(t, int32(1), c.hits[i].Load(), "workers=%d n=%d grain=%d item %d", workers, n, grain, i)
				}
			}
		}
		p.Close()
	}
}

func TestPoolRunAllocatesNothing(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	c := &countTask{hits: make([]atomic.Int32, 256)}
	allocs := testing.AllocsPerRun(100, func() { p.Run(256, 16, c) })
	require.Zero(t, allocs)
}

// TestPoolParksWhenIdle: workers spin only briefly after a job, then park,
// so an idle model costs no CPU.
func TestPoolParksWhenIdle(t *testing.T) {
	p := NewPool(4)
	defer p.Close()
	c := &countTask{hits: make([]atomic.Int32, 64)}
	for range 50 {
		p.Run(64, 1, c)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.parkedWorkers() != 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, 3, p.parkedWorkers(), "helpers still spinning %v after the last job", 5*time.Second)
	before := cpuTime(t)
	time.Sleep(200 * time.Millisecond)
	require.Less(t, cpuTime(t)-before, 50*time.Millisecond, "CPU used by an idle pool")
	p.Run(64, 1, c) // parked workers wake for the next job
	for i := range c.hits {
		require.Equal(t, int32(51), c.hits[i].Load())
	}
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestDefaultThreads(t *testing.T) {
	n := DefaultThreads()
	require.GreaterOrEqual(t, n, 1)
	require.LessOrEqual(t, n, runtime.GOMAXPROCS(0))
	if c := physicalCores(); c > 0 {
		require.Equal(t, min(c, runtime.GOMAXPROCS(0)), n)
	}
}

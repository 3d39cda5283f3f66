package cpu

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

type countTask struct {
	hits []atomic.Int32
}

func (c *countTask) Do(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

// Both wait modes, polling (spinHold) and parking at once (every CPU
// taken), outside and inside a pass, where waiters also park at once when
// passHold is 0 (the park and wake handshakes between every dispatch).
func TestPoolCoversEveryItemOnce(t *testing.T) {
	for _, pass := range []bool{false, true} {
		for _, workers := range []int{1, 2, 5, -2, -5, -15} {
			p := newPool(workers, spinHold)
			if workers < 0 {
				p = newPool(-workers, 0)
			}
			if workers < -5 {
				p.passHold = 0
			}
			if pass {
				p.Begin()
			}
			for _, n := range []int{1, 7, 64, 1001} {
				for _, grain := range []int{1, 3, 64, 5000} {
					c := &countTask{hits: make([]atomic.Int32, n)}
					p.Run(n, grain, c)
					for i := range c.hits {
						require.Equal(t, int32(1), c.hits[i].Load(), "pass=%v workers=%d n=%d grain=%d item %d", pass, workers, n, grain, i)
					}
				}
			}
			if pass {
				p.End()
			}
			p.Close()
		}
	}
}

func TestPoolRunAllocatesNothing(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	c := &countTask{hits: make([]atomic.Int32, 256)}
	allocs := testing.AllocsPerRun(100, func() { p.Run(256, 16, c) })
	require.Zero(t, allocs)
	allocs = testing.AllocsPerRun(100, func() {
		p.Begin()
		p.Run(256, 16, c)
		p.quiet()
		p.loud()
		p.End()
	})
	require.Zero(t, allocs)
}

// TestPoolPassKeepsWorkersAwake: during a pass the helpers poll between
// jobs for passHold even where they would park at once outside one (every
// CPU taken); after End they park and the idle pool uses no CPU. passHold
// is an hour here, so the 20-ms gaps are within it however loaded the
// machine; TestPoolPassParksAfterHold takes the other side.
func TestPoolPassKeepsWorkersAwake(t *testing.T) {
	p := newPool(4, 0)
	p.passHold = time.Hour
	defer p.Close()
	c := &countTask{hits: make([]atomic.Int32, 64)}
	p.Run(64, 1, c)
	waitParked(t, p, 3)
	p.Begin()
	p.Run(64, 1, c)
	time.Sleep(20 * time.Millisecond) // a long gap between two dispatches
	require.Zero(t, p.parkedWorkers(), "helpers parked inside a pass")
	p.quiet()
	waitParked(t, p, 3) // a BLAS call with its own threads: helpers make way
	p.loud()
	p.Run(64, 1, c)
	time.Sleep(20 * time.Millisecond)
	require.Zero(t, p.parkedWorkers(), "helpers parked inside a pass after a quiet section")
	p.End()
	waitParked(t, p, 3)
	before := cpuTime(t)
	time.Sleep(200 * time.Millisecond)
	require.Less(t, cpuTime(t)-before, 50*time.Millisecond, "CPU used by a pool idle after a pass")
	for i := range c.hits {
		require.Equal(t, int32(3), c.hits[i].Load())
	}
}

// TestPoolPassParksAfterHold: inside a pass, helpers and a caller that
// wait longer than passHold park, so a descheduled team member gets the
// cores back from its spinners; the next dispatch wakes them, and every
// item is still done once (async jobs and fences included).
func TestPoolPassParksAfterHold(t *testing.T) {
	p := newPool(4, spinHold)
	p.passHold = 0
	defer p.Close()
	c := &countTask{hits: make([]atomic.Int32, 64)}
	p.Begin()
	p.Run(64, 1, c)
	waitParked(t, p, 3) // a gap between two dispatches inside the pass
	for range 20 {
		p.RunAsync(64, 1, c)
	}
	p.Fence()
	waitParked(t, p, 3)
	p.Run(64, 1, c)
	p.End()
	for i := range c.hits {
		require.Equal(t, int32(22), c.hits[i].Load())
	}
	// the caller parks too: a helper that holds its chunk past passHold
	g := &gateTask{open: make(chan struct{})}
	p.Begin()
	done := make(chan struct{})
	go func() { p.Run(2, 1, g); close(done) }()
	deadline := time.Now().Add(shared.Wait(t, 5*time.Second))
	for p.waiting.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.NotZero(t, p.waiting.Load(), "Run's caller still polling while a helper holds its chunk")
	close(g.open)
	<-done
	p.End()
}

func waitParked(t *testing.T, p *Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(shared.Wait(t, 5*time.Second))
	for p.parkedWorkers() != n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, n, p.parkedWorkers(), "helpers parked after %v", 5*time.Second)
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
	deadline := time.Now().Add(shared.Wait(t, 5*time.Second))
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

// TestPoolPollsBetweenPassesWhenItFillsTheCPUs: a pool whose workers take
// every CPU still polls for spinHold after a pass before parking, so the
// host's work between two passes of one generation (a batched step, its
// draws, the scheduler) does not park and wake the helpers every time; it
// parks after that (TestPoolParksWhenIdle).
func TestPoolPollsBetweenPassesWhenItFillsTheCPUs(t *testing.T) {
	for _, n := range []int{runtime.NumCPU(), runtime.NumCPU() + 1} {
		p := NewPool(n)
		require.Equal(t, spinHold, p.spin, "workers=%d on %d CPUs", n, runtime.NumCPU())
		p.Close()
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

// gateTask holds its helpers' chunks until open is closed.
type gateTask struct{ open chan struct{} }

func (g *gateTask) Do(w, _, _ int) {
	if w != 0 {
		<-g.open
	}
}

// TestPoolFenceCountsFinishedJobs: Fence's fast path (finished jobs
// against published ones) sees a job whose helper is still running, waits
// for it, and reads idle once every job, synchronous or not, is done.
func TestPoolFenceCountsFinishedJobs(t *testing.T) {
	p := newPool(2, spinHold)
	defer p.Close()
	require.True(t, p.idle(), "a new pool")
	g := &gateTask{open: make(chan struct{})}
	require.NotZero(t, p.RunAsync(2, 1, g))
	require.False(t, p.idle(), "the helper holds its chunk")
	fenced := make(chan struct{})
	go func() { p.Fence(); close(fenced) }()
	select {
	case <-fenced:
		t.Fatal("Fence returned while a helper was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(g.open)
	<-fenced
	require.True(t, p.idle())

	c := &countTask{hits: make([]atomic.Int32, 64)}
	for range 3 * ringSize {
		p.RunAsync(64, 4, c)
		p.Run(64, 4, c)
	}
	p.Fence()
	require.True(t, p.idle())
	require.Equal(t, p.job.Load(), p.finished.Load(), "every published job counted once")
	for i := range c.hits {
		require.Equal(t, int32(6*ringSize), c.hits[i].Load(), "item %d", i)
	}
	require.Zero(t, testing.AllocsPerRun(100, p.Fence))
}

// Package cpu is the pure-Go backend: it executes plans on every core and
// is the reference every other backend is checked against.
package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Task is a unit of parallel work: Do processes items [lo, hi).
// Kernels implement it on long-lived structs so a dispatch allocates nothing.
type Task interface {
	Do(worker, lo, hi int)
}

// Pool is a persistent set of worker goroutines. Run splits n items into
// chunks that workers claim from a shared counter, so uneven rows balance
// without a goroutine per row.
type Pool struct {
	workers int
	mu      sync.Mutex // one Run at a time
	start   []chan struct{}
	wg      sync.WaitGroup

	// current job
	task  Task
	n     int
	grain int
	next  atomic.Int64
}

// NewPool starts a pool with the given number of workers (0 = GOMAXPROCS).
// The calling goroutine acts as worker 0, so workers-1 goroutines start.
func NewPool(workers int) *Pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := &Pool{workers: workers, start: make([]chan struct{}, workers)}
	for w := 1; w < workers; w++ {
		p.start[w] = make(chan struct{}, 1)
		go p.loop(w)
	}
	return p
}

// Workers is the number of workers, the caller included.
func (p *Pool) Workers() int { return p.workers }

func (p *Pool) loop(w int) {
	for range p.start[w] {
		p.drain(w)
		p.wg.Done()
	}
}

func (p *Pool) drain(w int) {
	for {
		lo := int(p.next.Add(int64(p.grain))) - p.grain
		if lo >= p.n {
			return
		}
		hi := min(lo+p.grain, p.n)
		p.task.Do(w, lo, hi)
	}
}

// Run calls t.Do over [0, n) in chunks of at most grain items and returns
// when all are done. Small jobs run on the caller alone.
func (p *Pool) Run(n, grain int, t Task) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	if p.workers == 1 || n <= grain {
		t.Do(0, 0, n)
		return
	}
	p.mu.Lock()
	p.task, p.n, p.grain = t, n, grain
	p.next.Store(0)
	helpers := min(p.workers-1, (n+grain-1)/grain-1)
	p.wg.Add(helpers)
	for w := 1; w <= helpers; w++ {
		p.start[w] <- struct{}{}
	}
	p.drain(0)
	p.wg.Wait()
	p.task = nil
	p.mu.Unlock()
}

// Close stops the worker goroutines.
func (p *Pool) Close() {
	for w := 1; w < p.workers; w++ {
		close(p.start[w])
	}
}

// Package cpu is the pure-Go backend: it executes plans on every core and
// is the reference every other backend is checked against.
package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Task is a unit of parallel work: Do processes items [lo, hi).
// Kernels implement it on long-lived structs so a dispatch allocates nothing.
type Task interface {
	Do(worker, lo, hi int)
}

// Pool is a persistent set of worker goroutines. Run splits n items into
// chunks that workers claim from a shared counter, so uneven rows balance
// without a goroutine per row.
//
// A plan step is hundreds of short dispatches, so waking workers through
// channels for each one (a futex round per worker per dispatch) cost more
// than many of the dispatches themselves and grew with the worker count.
// Instead a job is published by bumping one atomic word that idle workers
// spin on. Between Begin and End (one plan pass) workers and the caller
// park only after passHold without work: the team stays awake for the
// whole dispatch list, as ggml's graph compute does, and each dispatch costs one publish and at most one
// barrier: RunAsync skips it where the executor found that the following
// dispatches do not touch what the job writes (fences), so fast workers go
// straight on to the next job. Outside a pass a worker parks on its channel after spin without work, so
// an idle pool uses no CPU.
type Pool struct {
	workers int
	mu      sync.Mutex // one publisher (Run, Fence, WaitGen) at a time

	// job is the newest published generation. Jobs live in a ring of
	// slots so the caller may publish the next one while helpers still
	// drain earlier ones (RunAsync); every worker walks the generations
	// in order, so a slot is reused only once its helpers are all done.
	job     atomic.Uint64
	_       [56]byte     // spinners poll job while finished helpers write pending
	waiting atomic.Int32 // a caller parked until a slot's pending reaches 0
	_       [60]byte     // finished on a line of its own
	// finished counts the published jobs whose helpers are all done (the
	// last helper of a job adds one), so Fence with nothing in flight is
	// two loads instead of a scan of the ring. Jobs finish out of order,
	// but every job has a helper and each counts once: finished equals
	// job exactly when none is in flight.
	finished atomic.Uint64
	_        [56]byte

	done    chan struct{}
	parked  []atomic.Int32
	wake    []chan struct{}
	closed  atomic.Bool
	exited  sync.WaitGroup
	passes  atomic.Int32  // Begins not yet Ended (plans sharing the pool)
	begun   atomic.Uint64 // Begins so far (Passes)
	gate    admission     // one pass at a time, by priority (admit.go)
	quieted atomic.Int32  // quiet sections running: parking allowed again

	gen      uint64 // last generation published (under mu)
	slots    [ringSize]slot
	yield    bool          // more workers than Ps: spinners must let the others run
	spin     time.Duration // spinHold (tests change it)
	passHold time.Duration // passHold (tests change it)

	// barrier counting (barriers.go), under mu
	count     *BarrierCount
	tag       int    // kernel the caller's barriers count under
	unfenced  bool   // an asynchronous job was published since the last fence
	fencedGen uint64 // gen at the last counted fence
}

// slot is one published job. word is its generation<<jobShift | helpers:
// a worker above helpers, or one that finds a later generation there (the
// slot moved on without it), skips the job without reading the rest.
type slot struct {
	word    atomic.Uint64
	task    Task
	n       int
	grain   int
	async   bool // published by RunAsync (barrier counting)
	_       [64]byte
	next    atomic.Int64 // next item to claim
	_       [56]byte
	pending atomic.Int64 // this job's helpers still draining it
	_       [56]byte
}

// ringSize bounds the jobs in flight: RunAsync waits for the job ringSize
// generations back before reusing its slot.
const ringSize = 8

const (
	jobShift = 16
	jobMask  = 1<<jobShift - 1
	// passYield+1 polls (of spinPause each, tens of microseconds) between
	// two Goscheds of a spinning worker or caller.
	passYield = 1<<10 - 1
)

// spinHold is how long an idle worker keeps polling for the next job outside
// a pass, and Run's caller for the helpers' last chunks, before parking: short
// enough that on an oversubscribed machine a spinner soon hands its core to
// the descheduled thread it waits for, long enough to bridge the host's work
// between two passes of one generation.
//
// Inside a pass waiters poll with a Gosched every passYield+1 polls: on a
// 16-core Xeon (BENCHMARKS.md) 16 workers polling that way decoded 3.7x
// faster than parked ones, while an earlier pool whose 16 spinners never
// yielded halved it (likely: a goroutine preempted mid-chunk waited for a P
// that no spinner gave up). Outside a pass they poll the same way, for
// spinHold, also when the workers take every CPU: a batched decode step
// ends its pass, draws its tokens in another and does the host's
// bookkeeping (the scheduler, a request's mailbox) before the next, and
// helpers that parked at once (the earlier rule when workers filled the
// CPUs) had to be woken twice a token, each wake a futex and, in a VM, a
// sleeping vCPU's wake-up, and on a busy machine a wait for a CPU: on the
// 2-core VM loaded by other work, streamed chat through `hark serve` ran
// 1.18-1.32x faster and at 0.96 of its build's greedy bench where it had
// been 0.88-0.89; on the quiet VM within noise (1.04x, 0.97 -> 0.99)
// (BENCHMARKS.md, "Serve on the CPU, round 29").
var spinHold = 100 * time.Microsecond

// passHold is how long a waiter polls inside a pass before it parks. A
// decode step's gaps between dispatches are microseconds, so on a machine
// of its own the team never parks mid-pass. When other processes want the
// cores, a worker the OS descheduled mid-chunk holds up the dispatch for a
// time slice, and spinners that never park spend the slices it waits for:
// with two busy processes beside a 2-thread decode on 2 cores, tokens came
// 10-20x slower (BENCHMARKS.md, "The pool on a loaded machine").
var passHold = time.Millisecond

// NewPool starts a pool with the given number of workers (0 = DefaultThreads).
// The calling goroutine acts as worker 0, so workers-1 goroutines start.
func NewPool(workers int) *Pool {
	if workers <= 0 {
		workers = DefaultThreads()
	}
	return newPool(workers, spinHold)
}

// newPool starts a pool whose idle workers poll for spin before parking.
func newPool(workers int, spin time.Duration) *Pool {
	workers = max(1, min(workers, jobMask))
	liveWorkers.Add(int64(workers))
	p := &Pool{workers: workers, parked: make([]atomic.Int32, workers), wake: make([]chan struct{}, workers),
		yield: workers > runtime.GOMAXPROCS(0), done: make(chan struct{}, 1), spin: spin, passHold: passHold}
	for w := 1; w < workers; w++ {
		p.wake[w] = make(chan struct{}, 1)
		p.exited.Add(1)
		go p.loop(w)
	}
	return p
}

// Workers is the number of workers, the caller included.
func (p *Pool) Workers() int { return p.workers }

func (p *Pool) loop(w int) {
	defer p.exited.Done()
	var seen uint64 // last generation this worker has walked past
	for {
		g := p.await(w, seen)
		if p.closed.Load() {
			return
		}
		for seen < g {
			seen++
			s := &p.slots[seen%ringSize]
			word := s.word.Load()
			if word>>jobShift != seen || w > int(word&jobMask) {
				continue
			}
			p.drain(w, s)
			if s.pending.Add(-1) == 0 {
				p.finished.Add(1)
				if p.waiting.Load() != 0 {
					signal(p.done)
				}
			}
		}
	}
}

// await returns the newest generation once it is past seen: it polls for
// spinHold (passHold inside a pass), then parks until Run or Close wakes it.
func (p *Pool) await(w int, seen uint64) uint64 {
	var h holdTimer
	for i := 0; ; i++ {
		if j := p.job.Load(); j != seen || p.closed.Load() {
			return j
		}
		if i&63 != 63 {
			spinPause()
			continue
		}
		if h.holding(p) {
			// Yield now and then even with a P each: a goroutine the
			// runtime preempted in the middle of a chunk runs again
			// only when some P schedules, and the dispatch waits for it.
			if p.yield || i&passYield == passYield {
				runtime.Gosched()
			}
			continue
		}
		// Park: announce it, then check again, so a job published
		// between the check above and the announcement is not missed
		// (Run wakes every parked helper after publishing).
		p.parked[w].Store(1)
		if j := p.job.Load(); j != seen || p.closed.Load() {
			p.parked[w].Store(0)
			return j
		}
		<-p.wake[w]
		p.parked[w].Store(0)
		h = holdTimer{}
		i = 0
	}
}

// holdTimer is how long a waiter (an idle worker, or Run's caller waiting
// for helpers) keeps polling before it parks: spin outside a pass, passHold
// inside one, restarted when a pass begins or ends under it.
type holdTimer struct {
	deadline time.Time
	pass     bool
}

// holding starts the timer on its first call and reports whether the
// waiter should keep polling.
func (h *holdTimer) holding(p *Pool) bool {
	now, pass := time.Now(), p.inPass()
	if h.deadline.IsZero() || pass != h.pass {
		hold := p.spin
		if pass {
			hold = p.passHold
		}
		h.deadline, h.pass = now.Add(hold), pass
		return true
	}
	return now.Before(h.deadline)
}

// drain runs worker w's chunks of job s: chunk w first, without touching
// the shared counter (a dispatch whose grain gives each worker one chunk is
// a static partition), then the ones it claims.
func (p *Pool) drain(w int, s *slot) {
	if lo := w * s.grain; lo < s.n {
		s.task.Do(w, lo, min(lo+s.grain, s.n))
	}
	for {
		lo := int(s.next.Add(int64(s.grain))) - s.grain
		if lo >= s.n {
			return
		}
		s.task.Do(w, lo, min(lo+s.grain, s.n))
	}
}

// Run calls t.Do over [0, n) in chunks of at most grain items and returns
// when all are done. Small jobs run on the caller alone.
func (p *Pool) Run(n, grain int, t Task) { p.run(n, grain, t, false) }

// RunAsync is Run without the barrier at the end: it returns once the
// caller's own chunks are done, while helpers may still be running t, and
// gives the job's generation (0: it already finished). t and everything it
// reads or writes must stay untouched until WaitGen(gen) or Fence returns;
// the caller fences before anything that depends on the job (the executor
// decides that from the plan's buffer ranges, as ggml's graph compute
// places its barriers). Jobs run in publication order per worker.
func (p *Pool) RunAsync(n, grain int, t Task) uint64 { return p.run(n, grain, t, true) }

func (p *Pool) run(n, grain int, t Task, async bool) uint64 {
	if n <= 0 {
		return 0
	}
	if grain < 1 {
		grain = 1
	}
	if p.workers == 1 || n <= grain {
		t.Do(0, 0, n)
		return 0
	}
	p.mu.Lock()
	p.gen++
	gen := p.gen
	s := &p.slots[gen%ringSize]
	if s.async && gen > ringSize {
		p.counted(false, false, gen-ringSize)
	}
	p.wait(&s.pending) // the job ringSize generations back
	s.task, s.n, s.grain, s.async = t, n, grain, async
	p.unfenced = p.unfenced || async
	helpers := min(p.workers-1, (n+grain-1)/grain-1)
	s.next.Store(int64(helpers+1) * int64(grain)) // chunks 0..helpers go to their workers
	s.pending.Store(int64(helpers))
	s.word.Store(gen<<jobShift | uint64(helpers))
	p.job.Store(gen)
	for w := 1; w <= helpers; w++ {
		p.unpark(w)
	}
	p.drain(0, s)
	if !async {
		p.counted(true, false, gen)
		p.wait(&s.pending)
		s.task = nil
		gen = 0
	}
	p.mu.Unlock()
	return gen
}

// Fence returns when every published job is done. There is no global
// count of helpers in flight (one more atomic that every helper of every
// job decrements would be one more contended cache line per dispatch),
// only the count of finished jobs, which one helper per job bumps.
func (p *Pool) Fence() {
	if p.count != nil {
		p.mu.Lock()
		p.counted(false, true, 0)
		p.mu.Unlock()
	}
	if p.idle() {
		return
	}
	p.mu.Lock()
	p.fence()
	p.mu.Unlock()
}

// fence waits for every slot's job; the caller holds mu.
func (p *Pool) fence() {
	for i := range p.slots {
		p.wait(&p.slots[i].pending)
	}
}

// idle reports whether every job published before the call is done. job
// is loaded first: finished never passes it, so finished >= the loaded job
// means all jobs up to it finished, whatever is published meanwhile.
func (p *Pool) idle() bool {
	j := p.job.Load()
	return p.finished.Load() >= j
}

// inFlight counts the helpers still draining a published job (tests).
func (p *Pool) inFlight() int64 {
	var n int64
	for i := range p.slots {
		n += p.slots[i].pending.Load()
	}
	return n
}

// WaitGen returns when job gen (from RunAsync) is done.
func (p *Pool) WaitGen(gen uint64) {
	if gen == 0 {
		return
	}
	s := &p.slots[gen%ringSize]
	if p.count != nil {
		p.mu.Lock()
		if s.word.Load()>>jobShift == gen {
			p.counted(false, false, gen)
		}
		p.mu.Unlock()
	}
	if s.word.Load()>>jobShift != gen || s.pending.Load() == 0 {
		return // done, or its slot already carries a later job
	}
	p.mu.Lock()
	if s.word.Load()>>jobShift == gen {
		p.wait(&s.pending)
	}
	p.mu.Unlock()
}

// wait returns when count (helpers still draining) reaches 0: it polls for
// spinHold (passHold inside a pass), then parks until a helper signals. The
// caller holds mu.
func (p *Pool) wait(count *atomic.Int64) {
	var h holdTimer
	for i := 0; count.Load() != 0; i++ {
		if i&63 != 63 {
			spinPause()
			continue
		}
		if h.holding(p) {
			if p.yield || i&passYield == passYield {
				runtime.Gosched() // a helper may be waiting for this P
			}
			continue
		}
		// Same handshake as a worker's park; a stale token only makes
		// this loop check pending once more.
		p.waiting.Store(1)
		if count.Load() != 0 {
			<-p.done
		}
		p.waiting.Store(0)
		h = holdTimer{}
	}
}

// signal leaves a wake-up token on c unless one is already there.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// unpark wakes worker w if it parked. A token left by a wake that raced
// with the worker's own re-check only causes one spurious check later.
func (p *Pool) unpark(w int) {
	if p.parked[w].Load() != 0 {
		signal(p.wake[w])
	}
}

// Begin starts a pass: until End, idle workers and Run's caller poll for
// the next job instead of parking, so a plan's dispatches cost no wake-ups.
// Parked workers are woken now, while the caller prepares the first job.
func (p *Pool) Begin() {
	p.begun.Add(1)
	if p.workers == 1 {
		return
	}
	p.passes.Add(1)
	for w := 1; w < p.workers; w++ {
		p.unpark(w)
	}
}

// End ends a pass after its last job is done: workers go back to spinning
// for spin, then parking.
func (p *Pool) End() {
	if p.workers > 1 {
		p.Fence()
		p.passes.Add(-1)
	}
}

// Passes is how many passes (Begins) the pool has run, for tests and
// measurements: a plan pass is one, and so are passes run joined
// (Exec.RunJoined).
func (p *Pool) Passes() uint64 { return p.begun.Load() }

// quiet lets the workers park, even during a pass, until loud: the caller
// is about to run code that brings its own threads (a BLAS library's team).
func (p *Pool) quiet() { p.quieted.Add(1) }

func (p *Pool) loud() { p.quieted.Add(-1) }

// inPass reports whether waiting workers should keep polling.
func (p *Pool) inPass() bool { return p.passes.Load() > 0 && p.quieted.Load() == 0 }

// Close stops the worker goroutines and waits for them to exit.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fence()
	if p.closed.Swap(true) {
		return
	}
	for w := 1; w < p.workers; w++ {
		signal(p.wake[w])
	}
	p.exited.Wait()
	liveWorkers.Add(-int64(p.workers))
}

// liveWorkers counts the workers (callers' slots included) of every pool
// not yet closed.
var liveWorkers atomic.Int64

// LiveWorkers is the number of CPU workers of every open pool in the
// process, each pool's caller included: what the pools may keep busy at
// once. The runtime shares one pool, so it stays at the core count however
// many models are loaded.
func LiveWorkers() int { return int(liveWorkers.Load()) }

// parkedWorkers counts the helpers parked now (tests).
func (p *Pool) parkedWorkers() int {
	n := 0
	for w := 1; w < p.workers; w++ {
		n += int(p.parked[w].Load())
	}
	return n
}

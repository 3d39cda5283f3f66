package metal

import (
	"fmt"

	"github.com/harkapp/hark/engine/plan"
)

// Step is one replay of a pass in a chain.
type Step struct {
	Pass int
	Vars plan.Vars
}

// inFlight bounds the command buffers committed and not yet waited for:
// two, so the CPU encodes chunk N+1 while the GPU runs chunk N.
const inFlight = 2

// Run implements plan.Executable: one command buffer, waited for.
func (e *Exec) Run(pass int, vars *plan.Vars) error {
	var st [1]Step
	st[0].Pass = pass
	if vars != nil {
		st[0].Vars = *vars
	}
	_, err := e.RunSteps(st[:], 1, nil)
	return err
}

// RunSeq implements plan.Executable: the steps are chained, Tuning's
// ChainLength steps per command buffer.
func (e *Exec) RunSeq(pass int, steps []plan.Vars) error {
	if len(steps) == 0 {
		return nil
	}
	st := make([]Step, len(steps))
	for i, v := range steps {
		st[i] = Step{Pass: pass, Vars: v}
	}
	_, err := e.RunSteps(st, 0, nil)
	return err
}

// RunPasses is RunSteps for callers that cannot import this package: step
// i replays pass passes[i] with vars[i]. Model code can use it through a
// local interface (interface{ RunPasses([]int, []plan.Vars, int,
// func(int) bool) (int, error) }) on its plan.Executable.
func (e *Exec) RunPasses(passes []int, vars []plan.Vars, chunk int, done func(completed int) bool) (int, error) {
	if len(passes) != len(vars) {
		return 0, fmt.Errorf("metal: plan %s: %d passes for %d step variables", e.name, len(passes), len(vars))
	}
	st := make([]Step, len(passes))
	for i := range st {
		st[i] = Step{Pass: passes[i], Vars: vars[i]}
	}
	return e.RunSteps(st, chunk, done)
}

// RunSteps replays steps in order, chunk steps per command buffer (0 means
// Tuning's ChainLength), with up to two command buffers in flight: chunk
// N+1 is encoded and committed while the GPU runs chunk N, and a shared
// event signalled at the end of each chunk tells the CPU when it is done.
//
// done, if set, is called after each chunk completes with the number of
// steps completed so far; returning false stops the chain. A chunk already
// committed cannot be recalled: it runs to completion before RunSteps
// returns, and its results (past the point where the caller stopped) are
// to be ignored. RunSteps returns the number of steps completed before the
// caller stopped or an error occurred.
//
// An LLM decode chain is steps alternating the decode and argmax (or
// sample) passes: the argmax of step i writes tokens[pos+i+1] where the
// embedding of step i+1 reads it, so the CPU reads back only token ids.
func (e *Exec) RunSteps(steps []Step, chunk int, done func(completed int) bool) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return 0, fmt.Errorf("metal: plan %s: executable is closed", e.name)
	}
	for i := range steps {
		if p := steps[i].Pass; p < 0 || p >= len(e.passes) {
			return 0, fmt.Errorf("metal: plan %s: step %d: pass %d out of range (%d passes)", e.name, i, p, len(e.passes))
		}
	}
	if chunk <= 0 {
		chunk = max(int(e.tuning.ChainLength), 1)
	}
	before := e.stats
	defer func() { e.backend.add(e.stats.Minus(before)) }()
	sched := newSchedule(len(steps), chunk)
	type flight struct {
		cb  cmdBuffer
		end int
	}
	var queue [inFlight]flight
	nq, completed := 0, 0
	halted := false // by an error or the caller: later chunks do not count
	var firstErr error
	for {
		if lo, hi, ok := sched.next(nq); ok {
			cb, err := e.encodeChunk(steps[lo:hi])
			if err != nil {
				firstErr = err
				sched.stop()
				continue
			}
			cb.commit()
			e.stats.CommandBuffers++
			queue[nq] = flight{cb: cb, end: hi}
			nq++
			continue
		}
		if nq == 0 {
			break
		}
		f := queue[0]
		copy(queue[:], queue[1:nq])
		nq--
		err := f.cb.wait()
		if t0, t1 := f.cb.gpuTime(); t1 > t0 {
			e.stats.GPUSeconds += t1 - t0
		}
		f.cb.release()
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("metal: plan %s: command buffer of steps up to %d: %w", e.name, f.end, err)
			}
			sched.stop()
			halted = true
			continue
		}
		if halted {
			continue
		}
		completed = f.end
		if done != nil && !done(completed) {
			sched.stop()
			halted = true
		}
	}
	return completed, firstErr
}

// encodeChunk encodes steps into a new command buffer, not yet committed.
func (e *Exec) encodeChunk(steps []Step) (cmdBuffer, error) {
	cb, err := e.dev.commandBuffer()
	if err != nil {
		return nil, fmt.Errorf("metal: plan %s: %w", e.name, err)
	}
	e.enc.begin(cb.encoder())
	for i := range steps {
		if err := e.encodeStep(steps[i].Pass, &steps[i].Vars); err != nil {
			// A chunk with a partial step is never committed, so the
			// buffers are left as the previous chunk left them.
			abortCB(cb)
			return nil, err
		}
	}
	return cb, nil
}

// aborter is implemented by command buffers that can be dropped unsent.
type aborter interface{ abort() }

func abortCB(cb cmdBuffer) {
	if a, ok := cb.(aborter); ok {
		a.abort()
	}
}

// schedule cuts n steps into chunks and decides when the next one may be
// committed: while fewer than inFlight are outstanding, and not after a
// stop.
type schedule struct {
	n, chunk, pos int
	stopped       bool
}

func newSchedule(n, chunk int) *schedule { return &schedule{n: n, chunk: chunk} }

func (s *schedule) next(outstanding int) (lo, hi int, ok bool) {
	if s.stopped || s.pos >= s.n || outstanding >= inFlight {
		return 0, 0, false
	}
	lo, hi = s.pos, min(s.n, s.pos+s.chunk)
	s.pos = hi
	return lo, hi, true
}

func (s *schedule) stop() { s.stopped = true }

package plan

import "sync"

// StepRunner is Run and RunSeq written once for an executable that runs
// its steps one at a time on the calling goroutine under its lock (the
// CPU backend, the MSL executor). Embedded in the executable, it makes
// its Run and RunSeq: take the lock, check the pass with ready, then run
// each step with step (RunSeq naming a failing step, as RunEach does).
//
// The step gets the runner's own copy of the caller's variables: a
// pointer passed on through a func value escapes, and Run would then
// allocate the caller's Vars on every step.
type StepRunner struct {
	mu    *sync.Mutex
	ready func(pass int) error
	step  func(pass int, vars *Vars) error
	vars  *Vars // the running step's variables (under mu)
}

// NewStepRunner is the StepRunner of an executable whose lock is mu (the
// one its Read, Write and Close take too); ready and step are called with
// mu held.
func NewStepRunner(mu *sync.Mutex, ready func(pass int) error, step func(pass int, vars *Vars) error) StepRunner {
	return StepRunner{mu: mu, ready: ready, step: step, vars: new(Vars)}
}

// Run implements Executable (nil vars: all zero).
func (r StepRunner) Run(pass int, vars *Vars) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ready(pass); err != nil {
		return err
	}
	*r.vars = Vars{}
	if vars != nil {
		*r.vars = *vars
	}
	return r.step(pass, r.vars)
}

// RunSeq implements Executable: the steps in order.
func (r StepRunner) RunSeq(pass int, steps []Vars) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ready(pass); err != nil {
		return err
	}
	return RunEach(steps, func(v *Vars) error {
		*r.vars = *v
		return r.step(pass, r.vars)
	})
}

package cpu

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Passes of the plans sharing a pool (a dictation's Whisper and a chat's
// LLM in one runtime) take it one at a time, in priority order: a lower
// value first, equal ones in arrival order. Without the gate their
// dispatches interleaved one by one, so a dictation's clean-up ran at
// half speed beside a chat; with it the dictation waits for at most the
// one pass (a decode step, an encoder window) that holds the pool when it
// arrives, and the chat waits between its steps while it runs. The
// runtime sets each model's priority (Backend.Prioritized).

// DefaultPriority is a pass's priority when its backend has none.
const DefaultPriority = 1

// admission is a Pool's gate for passes.
type admission struct {
	mu      sync.Mutex
	busy    bool
	seq     uint64
	waiting []*passWaiter
	// trace, when set (tests), sees every request and grant under mu:
	// granted false when the pass starts waiting, true when it gets the
	// pool.
	trace func(pri int32, granted bool)
}

type passWaiter struct {
	pri int32
	seq uint64
	ch  chan struct{}
}

// admit returns when the calling pass holds the pool.
func (a *admission) admit(pri int32) {
	a.mu.Lock()
	if !a.busy {
		a.busy = true
		a.note(pri, true)
		a.mu.Unlock()
		return
	}
	a.seq++
	w := &passWaiter{pri: pri, seq: a.seq, ch: make(chan struct{})}
	a.waiting = append(a.waiting, w)
	a.note(pri, false)
	a.mu.Unlock()
	<-w.ch // leave handed the pool over: busy stays set
}

// leave hands the pool to the most urgent waiting pass, or frees it.
func (a *admission) leave() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.waiting) == 0 {
		a.busy = false
		return
	}
	best := 0
	for i, w := range a.waiting {
		if b := a.waiting[best]; w.pri < b.pri || w.pri == b.pri && w.seq < b.seq {
			best = i
		}
	}
	w := a.waiting[best]
	a.waiting = slices.Delete(a.waiting, best, best+1)
	a.note(w.pri, true)
	close(w.ch)
}

func (a *admission) note(pri int32, granted bool) {
	if a.trace != nil {
		a.trace(pri, granted)
	}
}

// Prioritized is a view of b whose plans' passes take the shared pool at
// the priority *pri holds when each pass starts (the runtime updates it
// as the model changes hands). Closing the view leaves the pool running.
func (b *Backend) Prioritized(pri *atomic.Int32) *Backend {
	return &Backend{pool: b.pool, floatActs: b.floatActs, quantGEMM: b.quantGEMM, pri: pri}
}

// Priority is the priority b's passes take the pool at now.
func (b *Backend) Priority() int32 { return priorityOf(b.pri) }

func priorityOf(p *atomic.Int32) int32 {
	if p == nil {
		return DefaultPriority
	}
	return p.Load()
}

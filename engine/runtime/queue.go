package runtime

import (
	"context"
	"slices"
)

// Priority orders the requests queued for one model: a lower value goes
// first, equal values in arrival order.
type Priority int

const (
	// Dictation is someone waiting for their words to appear.
	Dictation Priority = iota
	// Interactive is an API request or a chat message.
	Interactive
	// Batch is a file job: it yields to anything more urgent between
	// 30-s windows (Speech.Yield).
	Batch
)

// waiter is a request queued for an entry.
type waiter struct {
	pri     Priority
	seq     uint64
	ch      chan struct{} // closed when granted
	granted bool          // guarded by Runtime.mu
}

// next removes and returns the waiter to serve next (nil: none).
func (e *entry) next() *waiter {
	if len(e.waiters) == 0 {
		return nil
	}
	best := 0
	for i, w := range e.waiters {
		if w.pri < e.waiters[best].pri || (w.pri == e.waiters[best].pri && w.seq < e.waiters[best].seq) {
			best = i
		}
	}
	w := e.waiters[best]
	e.waiters = slices.Delete(e.waiters, best, best+1)
	return w
}

// hold records the holder's priority, for the queue and the pool.
func (e *entry) hold(pri Priority) {
	e.holder = pri
	e.passPri.Store(int32(pri))
}

// urgent reports whether a waiter outranks the holder, or (equal) ranks
// with it.
func (e *entry) urgent(equal bool) bool {
	for _, w := range e.waiters {
		if w.pri < e.holder || equal && w.pri == e.holder {
			return true
		}
	}
	return false
}

// wait takes e at priority pri, queueing behind its holder. Called with
// r.mu held; on success r.mu is held again, on error it is released.
func (r *Runtime) wait(ctx context.Context, e *entry, pri Priority) error {
	if !e.busy && len(e.waiters) == 0 {
		e.busy = true
		e.hold(pri)
		r.note(e, Granted, pri)
		return nil
	}
	r.seq++
	w := &waiter{pri: pri, seq: r.seq, ch: make(chan struct{})}
	e.waiters = append(e.waiters, w)
	r.note(e, Queued, pri)
	r.mu.Unlock()
	select {
	case <-w.ch:
		r.mu.Lock()
		return nil
	case <-ctx.Done():
		r.mu.Lock()
		if w.granted {
			r.handOver(e) // granted as we gave up: pass it on
		} else {
			e.waiters = slices.DeleteFunc(e.waiters, func(x *waiter) bool { return x == w })
			r.note(e, Left, pri)
			if r.idle(e) && e.model == nil {
				r.unload(e)
			}
		}
		r.mu.Unlock()
		return ctx.Err()
	}
}

// yield lets a more urgent waiter (with equal, one as urgent) use e, then
// queues for it again at pri, behind the waiters already there. It
// returns at once when nobody such waits. On error (ctx ended) e is no
// longer held.
func (r *Runtime) yield(ctx context.Context, e *entry, pri Priority, equal bool) error {
	r.mu.Lock()
	if !e.urgent(equal) {
		r.mu.Unlock()
		return nil
	}
	r.handOver(e)
	if err := r.wait(ctx, e, pri); err != nil {
		return err
	}
	r.mu.Unlock()
	return nil
}

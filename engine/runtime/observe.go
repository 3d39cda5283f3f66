package runtime

// QueueEvent is one step of a model's queue, in the order the runtime
// took them: an observer (Runtime.Observe) sees who waited for a model
// and who got it before whom, which a timing cannot show on a busy
// machine.
type QueueEvent struct {
	Path string
	Kind QueueKind
	Pri  Priority // the request's (Released: the holder's)
}

// QueueKind is what happened in a model's queue.
type QueueKind int

const (
	// Queued: a request waits behind the model's holder.
	Queued QueueKind = iota
	// Granted: a request holds the model (at once, or from the queue).
	Granted
	// Released: the holder gave the model back, or lent it at a Yield.
	Released
	// Left: a queued request stopped waiting (its context ended).
	Left
)

func (k QueueKind) String() string {
	switch k {
	case Queued:
		return "queued"
	case Granted:
		return "granted"
	case Released:
		return "released"
	case Left:
		return "left"
	}
	return "unknown"
}

// Observe sends every queue event from now on to f (nil: none). f runs
// with the runtime's lock held, in the events' order: it must return
// quickly and never call the runtime.
func (r *Runtime) Observe(f func(QueueEvent)) {
	r.mu.Lock()
	r.observe = f
	r.mu.Unlock()
}

// note tells the observer about e's queue. r.mu is held.
func (r *Runtime) note(e *entry, k QueueKind, pri Priority) {
	if r.observe != nil {
		r.observe(QueueEvent{Path: e.key.path, Kind: k, Pri: pri})
	}
}

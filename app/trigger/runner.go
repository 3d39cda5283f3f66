package trigger

import (
	"sync"
	"time"
)

// Runner drives a Machine in real time on its own goroutine. Sources call
// Feed from any goroutine (a macOS event tap's callback, say) and never
// block: inputs are stamped on arrival and queued, so a slow action (a
// recording starting) does not distort the timing of the presses behind
// it.
type Runner struct {
	m         *Machine
	do        func(Action)
	recording func() bool
	base      time.Time

	mu    sync.Mutex
	queue []Input
	wake  chan struct{}
	quit  chan struct{}
	done  chan struct{}
}

// NewRunner starts driving m: do performs each action, in order;
// recording (may be nil) reports whether dictation records now, so the
// machine follows recordings started or stopped elsewhere.
func NewRunner(m *Machine, do func(Action), recording func() bool) *Runner {
	r := &Runner{m: m, do: do, recording: recording, base: time.Now(),
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go r.loop()
	return r
}

// Feed reports that key (or, for "", any other key or button) went down
// or up.
func (r *Runner) Feed(key Key, down bool) {
	r.mu.Lock()
	r.queue = append(r.queue, Input{At: time.Since(r.base), Key: key, Down: down})
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Close stops the runner; no action runs after it returns.
func (r *Runner) Close() {
	close(r.quit)
	<-r.done
}

func (r *Runner) loop() {
	defer close(r.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Stop()
		var fire <-chan time.Time
		if at, ok := r.m.Deadline(); ok {
			timer.Reset(max(at-time.Since(r.base), 0))
			fire = timer.C
		}
		select {
		case <-r.quit:
			return
		case <-fire:
		case <-r.wake:
		}
		// Inputs first: a release queued before the deadline passed
		// must not lose the race to the timer.
		for {
			r.mu.Lock()
			if len(r.queue) == 0 {
				r.mu.Unlock()
				break
			}
			in := r.queue[0]
			r.queue = r.queue[1:]
			r.mu.Unlock()
			r.sync()
			r.run(r.m.Step(in))
		}
		r.sync()
		r.run(r.m.Advance(time.Since(r.base)))
	}
}

func (r *Runner) sync() {
	if r.recording != nil {
		r.m.Sync(r.recording())
	}
}

func (r *Runner) run(acts []Action) {
	for _, a := range acts {
		select {
		case <-r.quit:
			return
		default:
		}
		r.do(a)
	}
}

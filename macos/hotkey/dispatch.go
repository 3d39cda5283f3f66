package hotkey

import "sync"

// dispatcher turns raw pressed/released events from the Carbon handler
// (which runs on the main thread and must return quickly) into ordered
// calls of the user's callbacks on one worker goroutine. It drops a repeated
// press while the key is held and a release without a press, so down and up
// always alternate, and Remove releases a key still held, so push-to-talk
// never stays stuck in recording.
type dispatcher struct {
	mu       sync.Mutex
	bindings map[uint32]*binding
	queue    []func()
	wake     chan struct{}
	started  bool
}

type binding struct {
	down, up func()
	held     bool
}

func (d *dispatcher) add(id uint32, down, up func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bindings == nil {
		d.bindings = map[uint32]*binding{}
	}
	d.bindings[id] = &binding{down: down, up: up}
}

// remove forgets id; if its key was held, its up callback still runs.
func (d *dispatcher) remove(id uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.bindings[id]
	if b == nil {
		return
	}
	delete(d.bindings, id)
	if b.held && b.up != nil {
		d.enqueue(b.up)
	}
}

// event records a press (pressed=true) or release of hotkey id and reports
// whether it belonged to a binding, i.e. whether the event was handled.
func (d *dispatcher) event(id uint32, pressed bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.bindings[id]
	if b == nil {
		return false
	}
	if pressed == b.held {
		return true // key repeat, or a release whose press we never saw
	}
	b.held = pressed
	f := b.down
	if !pressed {
		f = b.up
	}
	if f != nil {
		d.enqueue(f)
	}
	return true
}

// enqueue appends f for the worker; d.mu is held. The queue is a slice,
// not a bounded channel, so a burst can never drop a release.
func (d *dispatcher) enqueue(f func()) {
	d.queue = append(d.queue, f)
	if !d.started {
		d.started = true
		d.wake = make(chan struct{}, 1)
		go d.work()
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *dispatcher) work() {
	for range d.wake {
		for {
			d.mu.Lock()
			if len(d.queue) == 0 {
				d.mu.Unlock()
				break
			}
			f := d.queue[0]
			d.queue[0] = nil
			d.queue = d.queue[1:]
			d.mu.Unlock()
			f()
		}
	}
}

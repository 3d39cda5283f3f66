// Package mainthread runs Go functions on the macOS main thread, where
// AppKit objects must be created and touched. Wails owns the main run loop
// (NSApplication run); this package only enqueues work on the main dispatch
// queue, which that run loop drains, and never touches Wails' AppDelegate.
package mainthread

import (
	"errors"
	"sync"
)

// ErrTimeout is returned by Call when the main thread did not run the job in
// time: usually no run loop is running yet (the app has not started) or the
// main thread is blocked.
var ErrTimeout = errors.New("mainthread: main thread did not run the job in time (is the app's run loop running?)")

// registry hands C code a small integer for each pending Go func: C may
// not hold Go pointers, so the dispatch context is an id looked up here.
type registry struct {
	mu   sync.Mutex
	next uintptr
	jobs map[uintptr]func()
}

// put stores f and returns its id, never 0 (0 reads as NULL to C).
func (r *registry) put(f func()) uintptr {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobs == nil {
		r.jobs = map[uintptr]func(){}
	}
	for {
		r.next++
		if r.next == 0 {
			continue
		}
		if _, used := r.jobs[r.next]; !used {
			break
		}
	}
	r.jobs[r.next] = f
	return r.next
}

// take removes and returns the func stored under id (nil if unknown or
// already taken, so a job can never run twice).
func (r *registry) take(id uintptr) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.jobs[id]
	delete(r.jobs, id)
	return f
}

func (r *registry) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.jobs)
}

// runJob runs the job stored under id, turning a panic into an error so it
// never unwinds through libdispatch's C frames.
func (r *registry) runJob(id uintptr) (err error) {
	f := r.take(id)
	if f == nil {
		return errors.New("mainthread: unknown job")
	}
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p}
		}
	}()
	f()
	return nil
}

// PanicError carries a panic raised by a job on the main thread back to the
// goroutine that is waiting for it.
type PanicError struct{ Value any }

func (e *PanicError) Error() string { return "mainthread: job panicked: " + toString(e.Value) }

func toString(v any) string {
	switch x := v.(type) {
	case error:
		return x.Error()
	case string:
		return x
	}
	return "non-string panic value"
}

package mainthread

import (
	"sync/atomic"
	"time"
)

// Job states for call: a job either starts or is cancelled, never both.
const (
	pending int32 = iota
	running
	cancelled
)

// call hands f to dispatch (which runs its argument later, on the main
// thread) and waits for it. With a timeout it gives up only if f has not
// started: then f will never run and ErrTimeout is returned; if f already
// started, call waits for it to finish. So a caller that sees ErrTimeout
// knows no side effect happened, and one that sees nil knows f completed.
// A panic in f comes back as *PanicError.
func call(dispatch func(job func()), f func(), timeout time.Duration) error {
	var state atomic.Int32
	done := make(chan error, 1)
	dispatch(func() {
		if !state.CompareAndSwap(pending, running) {
			return // the caller gave up
		}
		done <- runRecover(f)
	})
	if timeout <= 0 {
		return <-done
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		if state.CompareAndSwap(pending, cancelled) {
			return ErrTimeout
		}
		return <-done // started just now: its result stands
	}
}

func runRecover(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p}
		}
	}()
	f()
	return nil
}

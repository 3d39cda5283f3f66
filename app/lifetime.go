package app

import (
	"context"
	"sync"
	"time"
)

// lifetime is the app's, from New to Close: the services that start work
// of their own (a dictation's background pass, the speed probe, retrying
// a recording's write) start it here, so Close ends and waits for it.
type lifetime struct {
	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	stop   chan struct{} // closed by Close
	wg     sync.WaitGroup
}

func newLifetime() *lifetime {
	l := &lifetime{stop: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l
}

// closed reports whether Close has begun.
func (l *lifetime) closed() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// background runs f on its own goroutine unless the app is closing; Close
// waits for it.
func (l *lifetime) background(f func()) {
	if l.closed() {
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		if !l.closed() {
			f()
		}
	}()
}

// every runs f every d until Close.
func (l *lifetime) every(d time.Duration, f func()) {
	l.repeat(d, func() bool { f(); return false })
}

// repeat runs f every d until it reports that it is done, or Close.
func (l *lifetime) repeat(d time.Duration, f func() (done bool)) {
	l.background(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
			if f() {
				return
			}
		}
	})
}

// end begins Close: work started here is told to stop.
func (l *lifetime) end() {
	close(l.stop)
	l.cancel()
}

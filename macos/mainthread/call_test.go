package mainthread

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeMain is a "main thread": one goroutine draining a queue, which can
// be held to simulate a run loop that has not started.
type fakeMain struct {
	q    chan func()
	gate chan struct{}
}

func newFakeMain(started bool) *fakeMain {
	m := &fakeMain{q: make(chan func(), 16), gate: make(chan struct{})}
	if started {
		close(m.gate)
	}
	go func() {
		<-m.gate
		for f := range m.q {
			f()
		}
	}()
	return m
}

func (m *fakeMain) dispatch(job func()) { m.q <- job }

func TestCallRunsAndWaits(t *testing.T) {
	m := newFakeMain(true)
	var ran atomic.Bool
	require.NoError(t, call(m.dispatch, func() { ran.Store(true) }, 0))
	require.True(t, ran.Load())
	require.NoError(t, call(m.dispatch, func() {}, time.Second))
}

func TestCallTimeoutMeansNeverRuns(t *testing.T) {
	m := newFakeMain(false) // no run loop yet
	var ran atomic.Bool
	err := call(m.dispatch, func() { ran.Store(true) }, 20*time.Millisecond)
	require.ErrorIs(t, err, ErrTimeout)
	close(m.gate) // the run loop starts later and drains the queue
	done := make(chan struct{})
	m.dispatch(func() { close(done) })
	<-done
	require.False(t, ran.Load(), "a timed-out job must not run afterwards")
}

func TestCallStartedJobOutlivesTimeout(t *testing.T) {
	m := newFakeMain(true)
	var ran atomic.Bool
	err := call(m.dispatch, func() {
		time.Sleep(60 * time.Millisecond)
		ran.Store(true)
	}, 10*time.Millisecond)
	require.NoError(t, err, "started before the deadline: its result stands")
	require.True(t, ran.Load())
}

func TestCallPanicComesBack(t *testing.T) {
	m := newFakeMain(true)
	err := call(m.dispatch, func() { panic("bad selector") }, time.Second)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Contains(t, err.Error(), "bad selector")
	// The "main thread" survived the panic.
	require.NoError(t, call(m.dispatch, func() {}, time.Second))
}

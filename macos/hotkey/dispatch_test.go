package hotkey

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// recorder collects callback names in the order the worker runs them.
type recorder struct {
	mu  sync.Mutex
	got []string
	n   chan struct{}
}

func newRecorder() *recorder { return &recorder{n: make(chan struct{}, 1000)} }

func (r *recorder) fn(name string) func() {
	return func() {
		r.mu.Lock()
		r.got = append(r.got, name)
		r.mu.Unlock()
		r.n <- struct{}{}
	}
}

func (r *recorder) wait(t *testing.T, count int) []string {
	t.Helper()
	for i := 0; i < count; i++ {
		select {
		case <-r.n:
		case <-time.After(shared.Wait(t, 5*time.Second)):
			t.Fatalf("timed out after %d of %d callbacks", i, count)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func TestDispatcherAlternatesAndDropsRepeats(t *testing.T) {
	var d dispatcher
	r := newRecorder()
	d.add(1, r.fn("down"), r.fn("up"))

	require.True(t, d.event(1, true))
	require.True(t, d.event(1, true)) // auto-repeat while held: ignored
	require.True(t, d.event(1, false))
	require.True(t, d.event(1, false)) // stray release: ignored
	require.True(t, d.event(1, true))
	require.True(t, d.event(1, false))
	require.False(t, d.event(2, true), "unknown hotkey id is not handled")

	require.Equal(t, []string{"down", "up", "down", "up"}, r.wait(t, 4))
}

func TestDispatcherKeepsOrderUnderSlowCallbacks(t *testing.T) {
	var d dispatcher
	r := newRecorder()
	slowDown := func() { time.Sleep(5 * time.Millisecond); r.fn("down")() }
	d.add(7, slowDown, r.fn("up"))
	for i := 0; i < 20; i++ {
		d.event(7, true)
		d.event(7, false)
	}
	got := r.wait(t, 40)
	for i, g := range got {
		if i%2 == 0 {
			require.Equal(t, "down", g, "index %d", i)
		} else {
			require.Equal(t, "up", g, "index %d", i)
		}
	}
}

func TestDispatcherNilUpForToggle(t *testing.T) {
	var d dispatcher
	r := newRecorder()
	d.add(3, r.fn("toggle"), nil)
	d.event(3, true)
	d.event(3, false)
	d.event(3, true)
	d.event(3, false)
	require.Equal(t, []string{"toggle", "toggle"}, r.wait(t, 2))
}

func TestDispatcherRemoveReleasesHeldKey(t *testing.T) {
	var d dispatcher
	r := newRecorder()
	d.add(4, r.fn("down"), r.fn("up"))
	d.event(4, true)
	d.remove(4)
	require.Equal(t, []string{"down", "up"}, r.wait(t, 2))
	require.False(t, d.event(4, false), "removed binding no longer handles events")

	// Removing a key that is not held calls nothing.
	d.add(5, r.fn("down5"), r.fn("up5"))
	d.remove(5)
	d.remove(5)
	select {
	case <-r.n:
		t.Fatal("unexpected callback")
	case <-time.After(50 * time.Millisecond):
	}
}

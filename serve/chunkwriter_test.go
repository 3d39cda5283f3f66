package serve

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// flushLog records a chunk writer's writes and flushes: flushed[i] is how
// many writes had run when flush i came.
type flushLog struct {
	mu      sync.Mutex
	writes  []int
	flushed []int
	err     error // returned by the flushes, once set
}

func (l *flushLog) write(i int) func() error {
	return func() error { l.mu.Lock(); defer l.mu.Unlock(); l.writes = append(l.writes, i); return nil }
}

func (l *flushLog) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushed = append(l.flushed, len(l.writes))
	return l.err
}

func (l *flushLog) flushes() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.flushed...)
}

// The first chunk is flushed at once; the chunks that come within the
// interval after it wait for one flush (here the queue's end, since the
// interval is an hour); every chunk is written, in order.
func TestChunkWriterGroupsFlushes(t *testing.T) {
	var l flushLog
	c := newChunkWriter(chunkQueueLen, l.flush, time.Hour)
	require.NoError(t, c.put(l.write(0)))
	require.Eventually(t, func() bool { return len(l.flushes()) == 1 }, shared.Wait(t, 10*time.Second), time.Millisecond,
		"the first chunk waits for no interval")
	for i := 1; i < 6; i++ {
		require.NoError(t, c.put(l.write(i)))
	}
	require.NoError(t, c.wait())
	require.Equal(t, []int{0, 1, 2, 3, 4, 5}, l.writes)
	require.Equal(t, []int{1, 6}, l.flushes(), "one flush for the first chunk, one for the five after it")
}

// Within an interval the writer keeps taking chunks off the queue (only
// the flush waits), so a decode faster than the queue's length a flush
// (a GPU's ~1,000 tokens a second against the 100-ms default: ~100 chunks)
// is never held back by it.
func TestChunkWriterDrainsTheQueueWithinAnInterval(t *testing.T) {
	var l flushLog
	c := newChunkWriter(chunkQueueLen, l.flush, time.Hour)
	n := 3*chunkQueueLen + 1
	for i := range n {
		require.NoError(t, c.put(l.write(i))) // would block for an hour if the queue waited for the flush
	}
	require.NoError(t, c.wait())
	require.Len(t, l.writes, n)
	require.Equal(t, []int{1, n}, l.flushes(), "one flush for the first chunk, one at the end")
}

// Once the interval has passed, the chunks written within it are flushed
// without waiting for more.
func TestChunkWriterFlushesAfterTheInterval(t *testing.T) {
	var l flushLog
	c := newChunkWriter(chunkQueueLen, l.flush, time.Millisecond)
	require.NoError(t, c.put(l.write(0)))
	require.NoError(t, c.put(l.write(1)))
	require.Eventually(t, func() bool { f := l.flushes(); return len(f) > 0 && f[len(f)-1] == 2 },
		shared.Wait(t, 10*time.Second), time.Millisecond, "the second chunk is flushed when the interval ends")
	require.NoError(t, c.wait())
}

// A writer without an interval flushes every chunk, and a failed flush
// (the client left) stops it: put returns the error.
func TestChunkWriterEveryChunkAndFailure(t *testing.T) {
	var l flushLog
	c := newChunkWriter(chunkQueueLen, l.flush, 0)
	for i := range 3 {
		require.NoError(t, c.put(l.write(i)))
	}
	require.NoError(t, c.wait())
	require.Equal(t, []int{1, 2, 3}, l.flushes())

	gone := errors.New("client left")
	f := &flushLog{err: gone}
	c = newChunkWriter(chunkQueueLen, f.flush, 0)
	require.NoError(t, c.put(f.write(0)))
	require.Eventually(t, func() bool { return c.put(f.write(1)) != nil }, shared.Wait(t, 10*time.Second), time.Millisecond)
	require.ErrorIs(t, c.wait(), gone)
}

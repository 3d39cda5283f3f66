package mainthread

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRegistryIDsAndTake(t *testing.T) {
	var r registry
	ran := 0
	a := r.put(func() { ran += 1 })
	b := r.put(func() { ran += 10 })
	require.NotZero(t, a)
	require.NotEqual(t, a, b)
	require.Equal(t, 2, r.len())

	require.NoError(t, r.runJob(b))
	require.Equal(t, 10, ran)
	// A job runs once: a second dispatch of the same id is refused.
	require.Error(t, r.runJob(b))
	require.Equal(t, 10, ran)
	require.NoError(t, r.runJob(a))
	require.Equal(t, 11, ran)
	require.Zero(t, r.len())
}

func TestRegistrySkipsZeroAndLiveIDs(t *testing.T) {
	var r registry
	r.next = ^uintptr(0) - 1 // about to wrap
	x := r.put(func() {})
	require.Equal(t, ^uintptr(0), x)
	y := r.put(func() {})
	require.Equal(t, uintptr(1), y, "0 must be skipped after wrapping")

	// An id still pending is not reused after a wrap.
	r.next = 0
	z := r.put(func() {})
	require.Equal(t, uintptr(2), z)
}

func TestRegistryPanicBecomesError(t *testing.T) {
	var r registry
	id := r.put(func() { panic(errors.New("boom")) })
	err := r.runJob(id)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Contains(t, err.Error(), "boom")

	id = r.put(func() { panic("plain") })
	require.ErrorContains(t, r.runJob(id), "plain")
}

func TestRegistryConcurrent(t *testing.T) {
	var r registry
	var wg sync.WaitGroup
	ids := make(chan uintptr, 800)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				ids <- r.put(func() {})
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[uintptr]bool{}
	for id := range ids {
		require.False(t, seen[id], "duplicate id %d", id)
		seen[id] = true
		require.NoError(t, r.runJob(id))
	}
	require.Len(t, seen, 800)
	require.Zero(t, r.len())
}

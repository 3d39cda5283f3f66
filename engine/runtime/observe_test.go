package runtime

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The observer sees a model's queue in order: a holder, a dictation that
// queues behind it and gets the model at the holder's Yield, the holder
// queued again until the dictation releases, and a canceled wait.
func TestObserveQueue(t *testing.T) {
	r := newRT(t, Options{WhisperBeams: 1})
	kit := kitPath(t)
	ctx := context.Background()
	var mu sync.Mutex
	var evs []QueueEvent
	r.Observe(func(e QueueEvent) {
		require.Equal(t, kit, e.Path)
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	})
	m, err := r.Speech(ctx, kit, Interactive)
	require.NoError(t, err)
	got := make(chan *SpeechModel, 1)
	go func() {
		d, err := r.Speech(ctx, kit, Dictation)
		assertNoError(t, err)
		got <- d
	}()
	waiting(t, r, kit, 1)
	yielded := make(chan error, 1)
	go func() { yielded <- m.Yield(ctx) }()
	d := <-got
	waiting(t, r, kit, 1) // the holder, queued again
	cctx, cancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() {
		_, err := r.Speech(cctx, kit, Batch)
		left <- err
	}()
	waiting(t, r, kit, 2)
	cancel()
	require.ErrorIs(t, <-left, context.Canceled)
	d.Release()
	require.NoError(t, <-yielded)
	m.Release()
	r.Observe(nil)
	d, err = r.Speech(ctx, kit, Dictation) // not observed
	require.NoError(t, err)
	d.Release()

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []QueueEvent{
		{kit, Granted, Interactive},
		{kit, Queued, Dictation},
		{kit, Released, Interactive}, // the Yield lends it
		{kit, Granted, Dictation},
		{kit, Queued, Interactive},
		{kit, Queued, Batch},
		{kit, Left, Batch},
		{kit, Released, Dictation},
		{kit, Granted, Interactive},
		{kit, Released, Interactive},
	}, evs)
}

package app

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// countingLive starts streams that stand in for the live preview: each
// counts its tail decodes (finish) the way runLiveStream reaches
// whisper's Finish, and gives up when canceled.
func countingLive(finishes *atomic.Int32) func() *liveStream {
	return func() *liveStream {
		ctx, cancel := context.WithCancel(context.Background())
		l := &liveStream{wake: make(chan struct{}, 1), done: make(chan struct{}),
			stopStep: func() {}, cancel: cancel, started: true}
		go func() {
			defer close(l.done)
			for {
				select {
				case <-l.wake:
				case <-ctx.Done():
					return
				}
				l.mu.Lock()
				ended := l.ended
				l.pend = nil
				l.mu.Unlock()
				if ended {
					if ctx.Err() != nil {
						return
					}
					finishes.Add(1) // the tail decode
					return
				}
			}
		}()
		return l
	}
}

// Cancel and Discard abort the live stream: no tail decode for a text no
// one will see, and no trim. Cancel still keeps the recording in History;
// a Stop does decode the tail.
func TestCancelSkipsStreamFinish(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	src := &feedSource{}
	rec := NewCaptureRecorder(src.open)
	t.Cleanup(func() { rec.Close() })
	a.SetRecorder(rec)
	a.SetOutput(&textSink{})
	var finishes atomic.Int32
	rec.SetLive(countingLive(&finishes))

	require.NoError(t, a.Dictation.Start())
	st, _ := a.Dictation.Status()
	src.push(make([]float32, 16000), 160) // one second of silence
	require.NoError(t, a.Dictation.Cancel(), "silence is no error for a cancel")
	require.Zero(t, finishes.Load(), "a cancel does not decode the stream's tail")
	require.False(t, a.Dictation.Recording())
	it, err := a.History.Get(st.ItemID)
	require.NoError(t, err, "the canceled recording stays in History")
	require.InDelta(t, 1000, it.DurationMs, 100)
	require.Equal(t, []any{CanceledItem{ItemID: st.ItemID}}, ev.named(EventDictationCanceled))

	require.NoError(t, a.Dictation.Start())
	src.push(make([]float32, 8000), 160)
	require.NoError(t, a.Dictation.Discard())
	require.Zero(t, finishes.Load(), "a discard does not decode the stream's tail")

	// Abort hands back every sample, untrimmed; Stop finishes the stream.
	require.NoError(t, rec.Start(RecordOptions{Path: filepath.Join(t.TempDir(), "a.wav"), OnPartial: func(string) {}}))
	src.push(make([]float32, 4800), 160)
	r, err := rec.Abort()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(r.Samples), 4800)
	require.Zero(t, finishes.Load())
	require.NoError(t, rec.Start(RecordOptions{Path: filepath.Join(t.TempDir(), "b.wav"), OnPartial: func(string) {}}))
	src.push(make([]float32, 4800), 160)
	_, err = rec.Stop()
	require.ErrorContains(t, err, "no speech")
	require.Equal(t, int32(1), finishes.Load(), "a stop decodes the tail")
}

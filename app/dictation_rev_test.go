package app

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// TestDictationStatusRevOrder: the Dictation view opens with Status's
// reply and follows the "dictation:state" events, which come by another
// way; a reply taken before a state change can reach the view after the
// change's event. The view keeps the status with the largest Rev, so the
// newer state must outrank the older reply, also across a restart.
func TestDictationStatusRevOrder(t *testing.T) {
	dir := t.TempDir()
	ev := newEvents()
	a := openApp(t, dir, t.TempDir(), ev) // no model: nothing is transcribed
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")})
	a.SetOutput(&textSink{})

	require.NoError(t, a.Dictation.Start())
	reply, err := a.Dictation.Status() // the view opening while it records
	require.NoError(t, err)
	require.Equal(t, DictRecording, reply.State)
	require.NoError(t, a.Dictation.Cancel())
	states := ev.named(EventDictationState)
	require.NotEmpty(t, states)
	last := states[len(states)-1].(DictationStatus)
	require.Equal(t, DictIdle, last.State)
	// The losing order: the idle event first, then the older reply.
	require.Equal(t, DictIdle, newest(last, reply).State, "the reply (rev %d) outranks the newer event (rev %d)", reply.Rev, last.Rev)
	for i := 1; i < len(states); i++ {
		require.Greater(t, states[i].(DictationStatus).Rev, states[i-1].(DictationStatus).Rev, "event %d", i)
	}

	require.NoError(t, a.Close())
	b := openApp(t, dir, t.TempDir(), newEvents())
	st, err := b.Dictation.Status()
	require.NoError(t, err)
	require.Greater(t, st.Rev, last.Rev, "a restarted app's status outranks the last one before it")
}

// newest is the status the view shows after taking each in turn.
func newest(sts ...DictationStatus) DictationStatus {
	var shown DictationStatus
	for _, s := range sts {
		if s.Rev >= shown.Rev {
			shown = s
		}
	}
	return shown
}

// TestDictationStatusRevConcurrent: Revs are taken under the lock that
// orders the states, so the status with the largest Rev, among those sent
// and replied while others change it, is the one the service ends with.
func TestDictationStatusRevConcurrent(t *testing.T) {
	ev := newEvents()
	d := &Dictation{deps: dictationDeps{emit: ev}}
	var mu sync.Mutex
	var seen []DictationStatus
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				var st DictationStatus
				if i%2 == 0 {
					st = d.setState(func(s *DictationStatus) { s.Error = fmt.Sprint(g, "-", i) })
				} else {
					st, _ = d.Status()
				}
				mu.Lock()
				seen = append(seen, st)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	revs := map[int64]bool{}
	for _, s := range seen {
		require.False(t, revs[s.Rev], "rev %d twice", s.Rev)
		revs[s.Rev] = true
	}
	end, err := d.Status()
	require.NoError(t, err)
	shown := newest(seen...)
	require.Less(t, shown.Rev, end.Rev)
	require.Equal(t, end.Error, shown.Error, "the newest status (rev %d) is the last state", shown.Rev)
	for _, e := range ev.named(EventDictationState) {
		require.True(t, revs[e.(DictationStatus).Rev], "an event is a status returned")
	}
}

// TestDictationStartCancelled: a Cancel the moment Start has its
// recording ends it for good. Start once set the recording and its status
// in two steps; a Cancel between them ended the recording, then the status
// said "recording" with nothing recording (Stop: "not recording", Start:
// "already recording").
func TestDictationStartCancelled(t *testing.T) {
	a := openApp(t, t.TempDir(), t.TempDir(), newEvents())
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")})
	a.SetOutput(&textSink{})
	a.Dictation.started = func() {
		a.Dictation.started = nil
		require.NoError(t, a.Dictation.Cancel())
	}
	require.NoError(t, a.Dictation.Start())
	st, err := a.Dictation.Status()
	require.NoError(t, err)
	require.Equal(t, DictIdle, st.State)
	require.NoError(t, a.Dictation.Start(), "a new dictation starts")
	require.NoError(t, a.Dictation.Cancel())
}

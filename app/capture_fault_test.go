package app

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/control"
	"github.com/harkapp/hark/app/dictation"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture"
	"github.com/harkapp/hark/internal/shared"
)

// faultSource is an input device with injected faults: its open can fail
// (after a delay that lets the recorder's writer tick), its Start can hang
// until the test releases it, and it can vanish with an EventError.
type faultSource struct {
	feedSource
	openErr   error
	openDelay time.Duration
	started   chan struct{} // closed when Start is entered (nil: not told)
	release   chan struct{} // Start waits for it (nil: returns at once)
	onEvent   func(capture.Event)
	closed    chan struct{}
	closeOnce sync.Once
}

func newFaultSource() *faultSource { return &faultSource{closed: make(chan struct{})} }

func (f *faultSource) open(o capture.Options) (dictation.Source, error) {
	if f.openDelay > 0 {
		time.Sleep(f.openDelay) // a driver that takes its time to fail
	}
	if f.openErr != nil {
		return nil, f.openErr
	}
	f.mu.Lock()
	f.onEvent = o.OnEvent
	f.mu.Unlock()
	if _, err := f.feedSource.open(o); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *faultSource) Start() error {
	if f.started != nil {
		close(f.started)
	}
	if f.release != nil {
		<-f.release
	}
	return nil
}

func (f *faultSource) Close() error {
	f.closeOnce.Do(func() { close(f.closed) })
	return nil
}

// faultApp is an app whose recorder opens src.
func faultApp(t *testing.T, src *faultSource) (*App, *CaptureRecorder, *events) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	rec := NewCaptureRecorder(src.open)
	t.Cleanup(func() { rec.Close() })
	a.SetRecorder(rec)
	a.SetOutput(&textSink{})
	return a, rec, ev
}

// within fails the test if f does not return: the failure being tested is
// a hang, so the bound only turns a hang into a failure.
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	c := make(chan T, 1)
	go func() { c <- f() }()
	select {
	case v := <-c:
		return v
	case <-time.After(shared.Wait(t, 60*time.Second)):
		t.Fatalf("%s hung", what)
		panic("unreachable")
	}
}

// requireIdle checks that status, stop, cancel and start agree that no
// recording runs, and that the last state event told the user errText.
func requireIdle(t *testing.T, a *App, ev *events, errText string) {
	t.Helper()
	st, err := a.Dictation.Status()
	require.NoError(t, err)
	require.Equal(t, DictIdle, st.State)
	require.Contains(t, st.Error, errText)
	states := ev.named(EventDictationState)
	require.NotEmpty(t, states)
	last := states[len(states)-1].(DictationStatus)
	require.Equal(t, DictIdle, last.State)
	require.Contains(t, last.Error, errText, "the UI is told")
	_, err = a.Dictation.Stop()
	require.ErrorContains(t, err, "not recording")
	require.ErrorIs(t, a.Dictation.Cancel(), errNotRecording)
}

// TestDictationMicFailsToOpen: a device that fails to open, slowly enough
// that the recorder's writer would tick first (the old lock-up: Start
// waited for the writer, which waited for the lock Start held). Every
// Start fails with a clear error, the state stays idle and consistent,
// no history row is left, and a working device then records.
func TestDictationMicFailsToOpen(t *testing.T) {
	src := newFaultSource()
	src.openErr = errors.New("capture: opening input device: connection refused")
	src.openDelay = 120 * time.Millisecond
	a, _, ev := faultApp(t, src)
	for range 3 {
		err := within(t, "Start on a failing device", a.Dictation.Start)
		require.ErrorContains(t, err, "the microphone could not be opened")
		require.ErrorContains(t, err, "connection refused")
		requireIdle(t, a, ev, "the microphone could not be opened")
	}
	// `hark dictate start` is told the same.
	r := within(t, "the control command", func() control.Reply { return a.ControlCommand("start") })
	require.Equal(t, DictIdle, r.State)
	require.Contains(t, r.Error, "the microphone could not be opened")
	items, err := a.History.List("", 10, 0)
	require.NoError(t, err)
	require.Empty(t, items, "nothing was recorded, nothing is left")

	src.openErr, src.openDelay = nil, 0
	require.NoError(t, a.Dictation.Start())
	st, _ := a.Dictation.Status()
	require.Equal(t, DictRecording, st.State)
	require.Empty(t, st.Error)
	require.NoError(t, a.Dictation.Cancel())
}

// TestDictationMicDisappears: the device goes away mid-recording and no
// other is left. The recording ends by itself, the user is warned, and
// what was captured before is transcribed and kept.
func TestDictationMicDisappears(t *testing.T) {
	src := newFaultSource()
	a, rec, ev := faultApp(t, src)
	rec.mic.devices = func() ([]capture.Device, error) { return nil, capture.ErrNoDevice }
	clip, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)

	require.NoError(t, a.Dictation.Start())
	src.push(clip, 160)
	src.mu.Lock()
	onEvent := src.onEvent
	src.mu.Unlock()
	onEvent(capture.Event{Kind: capture.EventLost})
	onEvent(capture.Event{Kind: capture.EventError, Err: errors.New("device unplugged")})

	// The stop runs by itself; its end is an idle state (with an error
	// if it failed) and, on success, a done event.
	idle := ev.wait(t, EventDictationState, func(x any) bool {
		s := x.(DictationStatus)
		return s.State == DictIdle
	}, 5*time.Minute).(DictationStatus)
	require.Empty(t, idle.Error)
	done := ev.named(EventDictationDone)
	require.Len(t, done, 1)
	it := done[0].(Item)
	require.Equal(t, kitText(t, "jfk"), it.Text, "the audio captured before the loss is transcribed")
	wav, err := audio.Load16k(it.AudioPath)
	require.NoError(t, err)
	require.Len(t, wav, len(clip), "and kept")
	var warned bool
	for _, w := range ev.named(EventDictationWarning) {
		warned = warned || w.(Warning).Message == "no input device is left; the recording ends here"
	}
	require.True(t, warned, "the user is told")
	st, _ := a.Dictation.Status()
	require.Equal(t, DictIdle, st.State)
	require.ErrorIs(t, a.Dictation.Cancel(), errNotRecording)
}

// TestDictationMicDeliversNothing: the device opens but sends no audio.
// Stop says so (not "no speech"), the state is idle, the (empty)
// recording stays in History, and the next Start works.
func TestDictationMicDeliversNothing(t *testing.T) {
	src := newFaultSource()
	a, _, ev := faultApp(t, src)
	require.NoError(t, a.Dictation.Start())
	_, err := a.Dictation.Stop()
	require.ErrorContains(t, err, "the microphone delivered no audio")
	requireIdle(t, a, ev, "the microphone delivered no audio")
	items, err := a.History.List("", 10, 0)
	require.NoError(t, err)
	require.Len(t, items, 1, "the recording is kept")
	require.NoError(t, a.Dictation.Start())
	require.NoError(t, a.Dictation.Cancel())
}

// TestDictationMicSlowToStart: a device whose start hangs. Past the
// start bound the Start fails with a clear error and the device is closed
// when it finally starts; a Stop or Cancel while it opens discards the
// recording the moment it opens, and meanwhile every call agrees that a
// start is under way.
func TestDictationMicSlowToStart(t *testing.T) {
	t.Run("past the bound", func(t *testing.T) {
		src := newFaultSource()
		src.release = make(chan struct{})
		a, rec, ev := faultApp(t, src)
		rec.startTimeout = 50 * time.Millisecond // the device is held until after Start gives up
		err := within(t, "Start on a hung device", a.Dictation.Start)
		require.ErrorIs(t, err, dictation.ErrDeviceSlow)
		require.ErrorContains(t, err, "the microphone did not start")
		requireIdle(t, a, ev, "the microphone did not start")
		close(src.release)
		within(t, "closing the late device", func() struct{} { <-src.closed; return struct{}{} })
		items, err := a.History.List("", 10, 0)
		require.NoError(t, err)
		require.Empty(t, items)
	})
	t.Run("stopped while it opens", func(t *testing.T) {
		src := newFaultSource()
		src.started, src.release = make(chan struct{}), make(chan struct{})
		a, _, ev := faultApp(t, src)
		started := make(chan error, 1)
		go func() { started <- a.Dictation.Start() }()
		within(t, "the device's start", func() struct{} { <-src.started; return struct{}{} })
		st, _ := a.Dictation.Status()
		require.Equal(t, DictRecording, st.State)
		require.ErrorContains(t, a.Dictation.Start(), "already recording")
		_, err := a.Dictation.Stop()
		require.ErrorIs(t, err, errStarting)
		require.NoError(t, a.Dictation.Cancel())
		close(src.release)
		require.NoError(t, within(t, "Start", func() error { return <-started }))
		st, _ = a.Dictation.Status()
		require.Equal(t, DictIdle, st.State)
		requireIdle(t, a, ev, "")
		items, err := a.History.List("", 10, 0)
		require.NoError(t, err)
		require.Empty(t, items, "nothing was captured: nothing is kept")
		require.NoError(t, a.Dictation.Start())
		require.NoError(t, a.Dictation.Cancel())
	})
}

// TestAppCloseDuringStuckStart: closing the app (hark ui's SIGTERM) while
// a device hangs in its start returns once the start bound passes.
func TestAppCloseDuringStuckStart(t *testing.T) {
	src := newFaultSource()
	src.started, src.release = make(chan struct{}), make(chan struct{})
	defer close(src.release)
	a, rec, _ := faultApp(t, src)
	rec.startTimeout = 200 * time.Millisecond
	go a.Dictation.Start()
	within(t, "the device's start", func() struct{} { <-src.started; return struct{}{} })
	within(t, "App.Close", func() error { return a.Close() })
	within(t, "CaptureRecorder.Close", rec.Close)
}

// TestAppCloseWhileDeviceOpens: the app closes while a device is still
// opening for a dictation; when it opens, the recording is discarded
// instead of running on after the app.
func TestAppCloseWhileDeviceOpens(t *testing.T) {
	src := newFaultSource()
	src.started, src.release = make(chan struct{}), make(chan struct{})
	a, rec, _ := faultApp(t, src)
	started := make(chan error, 1)
	go func() { started <- a.Dictation.Start() }()
	within(t, "the device's start", func() struct{} { <-src.started; return struct{}{} })
	require.NoError(t, within(t, "App.Close", a.Close))
	close(src.release)
	require.NoError(t, within(t, "Start", func() error { return <-started }))
	rec.ops.Lock()
	recording := rec.rec != nil && rec.rec.Recording()
	rec.ops.Unlock()
	require.False(t, recording, "no recording outlives the app")
}

package desktop

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/app/trigger"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// fakeSource stands in for the OS trigger source: the test presses keys
// through the feed the shell gave it.
type fakeSource struct {
	mu     sync.Mutex
	feed   func(trigger.Key, bool)
	key    trigger.Key
	err    error
	closes int
}

func (f *fakeSource) Watch(k trigger.Key, feed func(trigger.Key, bool)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.key, f.feed = k, feed
	return nil
}

func (f *fakeSource) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.feed = nil
	f.closes++
	return nil
}

func (f *fakeSource) press(k trigger.Key, down bool) {
	f.mu.Lock()
	feed := f.feed
	f.mu.Unlock()
	feed(k, down)
}

// silentRecorder records nothing: the test checks when dictation starts
// and stops, not what it hears.
type silentRecorder struct{}

func (silentRecorder) Start(app.RecordOptions) error  { return nil }
func (silentRecorder) Stop() (app.Recording, error)   { return app.Recording{}, nil }
func (silentRecorder) Devices() ([]app.Device, error) { return nil, nil }

// The shell binds the trigger from the settings to dictation: a held key
// records, a chord discards the recording, unbinding closes the source.
func TestShellTrigger(t *testing.T) {
	a, err := app.New(app.Config{DataDir: t.TempDir(), ModelsDir: t.TempDir(), NoSpeedProbe: true})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	a.SetRecorder(silentRecorder{})
	src := &fakeSource{}
	s := &Shell{app: a, plat: platform.Platform{Trigger: src}}

	st, err := a.Settings.Get()
	require.NoError(t, err)
	s.bindTrigger(st) // no trigger set: nothing watched
	require.Nil(t, src.feed)

	st.Trigger, st.HotkeyMode = "rightalt", "push"
	s.bindTrigger(st)
	require.Equal(t, trigger.RightAlt, src.key)
	src.press(trigger.RightAlt, true)
	require.Eventually(t, a.Dictation.Recording, shared.Wait(t, 3*time.Second), 5*time.Millisecond, "held: push-to-talk records")
	src.press("", true) // Right Option+E: a modifier after all
	// Idle, not merely "not recording": the discard deletes the row after
	// the recording stops and before the service goes idle.
	require.Eventually(t, func() bool {
		st, err := a.Dictation.Status()
		return err == nil && st.State == app.DictIdle
	}, shared.Wait(t, 3*time.Second), 5*time.Millisecond)
	src.press(trigger.RightAlt, false)
	items, err := a.History.List("", 10, 0)
	require.NoError(t, err)
	require.Empty(t, items, "the discarded recording left no row")

	// A source that refuses (no permission, key taken) leaves nothing bound.
	src.err = errors.New("refused")
	s.bindTrigger(st)
	require.Nil(t, s.trig.r)
	s.unbindTrigger()
	require.GreaterOrEqual(t, src.closes, 3)
}

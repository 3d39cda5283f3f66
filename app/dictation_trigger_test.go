package app

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/trigger"
	"github.com/harkapp/hark/internal/shared"
)

// A trigger key that turns out to be a modifier cancels its recording:
// no transcript, no history row, no audio file left.
func TestDictationTriggerCancel(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	rec := &clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")}
	sink := &textSink{}
	a.SetRecorder(rec)
	a.SetOutput(sink)

	require.NoError(t, a.Dictation.Discard(), "nothing to discard")
	require.NoError(t, a.Dictation.Trigger(trigger.Stop), "a stop while idle does nothing")
	require.NoError(t, a.Dictation.Trigger(trigger.Start))
	require.True(t, a.Dictation.Recording())
	st, _ := a.Dictation.Status()
	path := rec.opt.Path
	require.FileExists(t, path)

	require.NoError(t, a.Dictation.Trigger(trigger.Cancel))
	require.False(t, a.Dictation.Recording())
	st2, _ := a.Dictation.Status()
	require.Equal(t, DictIdle, st2.State)
	_, err := a.History.Get(st.ItemID)
	require.Error(t, err, "the row is gone")
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "the audio is gone")
	require.Empty(t, sink.texts, "nothing inserted")
	require.Empty(t, ev.named("dictation:done"))
	// A fresh start works after a cancel.
	require.NoError(t, a.Dictation.Start())
	require.NoError(t, a.Dictation.Discard())
}

func TestTriggerSettings(t *testing.T) {
	s := defaultSettings()
	require.Empty(t, s.Trigger, "the hotkey by default")
	require.NoError(t, s.validate())
	s.Trigger, s.TriggerDoubleTap, s.HotkeyMode = "rightalt", true, "push"
	require.NoError(t, s.validate())
	k, cfg := s.TriggerConfig()
	require.Equal(t, trigger.RightAlt, k)
	require.Equal(t, trigger.Config{Mode: "push", DoubleTap: true}, cfg)
	s.Trigger = "Right Option"
	require.ErrorContains(t, s.validate(), `use "rightalt"`)
	s.Trigger = "capslock"
	require.ErrorContains(t, s.validate(), "not one of")
}

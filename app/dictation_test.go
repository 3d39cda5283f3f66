package app

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

// clipRecorder stands in for the microphone: Start writes a kit clip to
// the WAV path the service gives it, as capture would, and reports a
// level; Stop returns its length.
type clipRecorder struct {
	clip string
	opt  RecordOptions
	// samples, if set, are the recording's samples (as capture hands them
	// over), else the WAV is transcribed.
	samples []float32
}

func (r *clipRecorder) Start(opt RecordOptions) error {
	b, err := os.ReadFile(r.clip)
	if err != nil {
		return err
	}
	r.opt = opt
	if err := os.WriteFile(opt.Path, b, 0o644); err != nil {
		return err
	}
	opt.OnLevel(0.1, 0.5)
	return nil
}

func (r *clipRecorder) Stop() (Recording, error) {
	d, err := audio.WAVDurationMs(r.opt.Path)
	return Recording{DurationMs: d, Samples: r.samples}, err
}

func (r *clipRecorder) Devices() ([]Device, error) {
	return []Device{{ID: "null", Name: "Null sink monitor", Default: true}}, nil
}

// textSink records what dictation inserts.
type textSink struct {
	mu    sync.Mutex
	texts []string
	modes []string
}

func (s *textSink) Insert(text, mode string, restore bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.texts = append(s.texts, text)
	s.modes = append(s.modes, mode)
	return nil
}

func TestDictationFlow(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)

	require.ErrorIs(t, a.Dictation.Start(), errNoRecorder, "no capture plugged in")
	_, err := a.Dictation.Devices()
	require.Error(t, err)

	rec := &clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")}
	sink := &textSink{}
	a.SetRecorder(rec)
	a.SetOutput(sink)
	devs, err := a.Dictation.Devices()
	require.NoError(t, err)
	require.Len(t, devs, 1)

	require.NoError(t, a.Dictation.Start())
	st, err := a.Dictation.Status()
	require.NoError(t, err)
	require.Equal(t, DictRecording, st.State)
	require.Error(t, a.Dictation.Start(), "already recording")
	// The row exists while capture runs.
	it, err := a.History.Get(st.ItemID)
	require.NoError(t, err)
	require.Equal(t, StatusRecording, it.Status)
	require.Equal(t, rec.opt.Path, it.AudioPath)
	require.Error(t, a.History.Delete(it.ID), "a recording in progress is not deleted")
	require.NotEmpty(t, ev.named("dictation:level"))

	done, err := a.Dictation.Stop()
	require.NoError(t, err)
	want := kitText(t, "jfk")
	require.Equal(t, want, done.Text)
	require.Equal(t, StatusDone, done.Status)
	require.Equal(t, KindDictation, done.Kind)
	require.Equal(t, []string{want}, sink.texts)
	require.Equal(t, []string{"paste"}, sink.modes)
	st, _ = a.Dictation.Status()
	require.Equal(t, DictIdle, st.State)
	require.Equal(t, want, st.LastText)
	ev.wait(t, "dictation:done", nil, time.Second)
	_, err = a.Dictation.Stop()
	require.Error(t, err, "not recording")

	// Toggle, with LLM clean-up on: the cleaned text is what is inserted.
	s, _ := a.Settings.Get()
	s.Cleanup, s.CleanupPrompt, s.OutputMode = true, "Fix the text.", "copy"
	s.CleanupTimeoutMs = 0 // its result, not its time, is checked here (cleanup_test.go)
	_, err = a.Settings.Update(s)
	require.NoError(t, err)
	require.NoError(t, a.Dictation.Toggle())
	require.NoError(t, a.Dictation.Toggle())
	ev.wait(t, "dictation:done", func(d any) bool { return d.(Item).ID != done.ID }, 60*time.Second)
	require.Eventually(t, func() bool { st, _ := a.Dictation.Status(); return st.State == DictIdle }, shared.Wait(t, 5*time.Second), 10*time.Millisecond)
	cleaned, err := a.Chat.Cleanup(want, "Fix the text.")
	require.NoError(t, err)
	sink.mu.Lock()
	require.Equal(t, []string{want, cleaned}, sink.texts)
	require.Equal(t, "copy", sink.modes[1])
	sink.mu.Unlock()
	items, err := a.History.List("", 10, 0)
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Equal(t, want, items[0].Text, "History keeps the raw transcript")
}

// failingRecorder fails to start: no row may be left behind.
type failingRecorder struct{ clipRecorder }

func (*failingRecorder) Start(RecordOptions) error { return errors.New("microphone permission denied") }

func TestDictationStartFailureLeavesNothing(t *testing.T) {
	a := openApp(t, t.TempDir(), t.TempDir(), nil)
	a.SetRecorder(&failingRecorder{})
	require.ErrorContains(t, a.Dictation.Start(), "permission denied")
	items, err := a.History.List("", 0, 0)
	require.NoError(t, err)
	require.Empty(t, items)
	st, _ := a.Dictation.Status()
	require.Equal(t, DictIdle, st.State)
	require.Contains(t, st.Error, "permission denied")
}

// BenchmarkDictationStopToText measures what the user waits for after
// releasing the hotkey: Stop (capture already on disk) to the text handed
// to the output, for a 5.1-s kit clip with the speech model warm.
func BenchmarkDictationStopToText(b *testing.B) {
	a, err := New(Config{DataDir: b.TempDir(), ModelsDir: testModelsDir(b), NoSpeedProbe: true})
	require.NoError(b, err)
	defer a.Close()
	sink := &textSink{}
	a.SetRecorder(&clipRecorder{clip: shared.Path(b, "audio", "ljspeech-LJ001-0004.wav")})
	a.SetOutput(sink)
	want := kitText(b, "ljspeech-LJ001-0004")
	benchStops(b, a, func(it Item) { require.Equal(b, want, it.Text) })
}

// benchStops times Dictation.Stop (the wait after the hotkey's release),
// starting each recording off the clock; check looks at each result.
func benchStops(b *testing.B, a *App, check func(Item)) {
	for b.Loop() {
		b.StopTimer()
		require.NoError(b, a.Dictation.Start())
		b.StartTimer()
		it, err := a.Dictation.Stop()
		require.NoError(b, err)
		check(it)
	}
}

// A dictation's samples, as capture hands them over, are transcribed with
// the shared speech model and stored on the recording's row.
func TestDictationTranscribesItsSamples(t *testing.T) {
	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	x, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav"), samples: x})
	require.NoError(t, a.Dictation.Start())
	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	got, err := a.History.Get(it.ID)
	require.NoError(t, err)
	require.Equal(t, StatusDone, got.Status)
	require.Equal(t, kitText(t, "jfk"), got.Text)
	require.Equal(t, "en", got.Language)
	require.Equal(t, "kit", got.Model)
	require.NotEmpty(t, got.Segments)
	p, err := a.History.Pending()
	require.NoError(t, err)
	require.Empty(t, p)
}

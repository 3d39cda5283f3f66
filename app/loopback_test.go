//go:build linux && cgo

package app

import (
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/app/platform/x11test"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/harkapp/hark/audio/vad"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// loopbackClip is a 4.8 s kit clip: about the 5-s utterance the latency
// target is stated for.
const loopbackClip = "ljspeech-LJ001-0004"

// copyAndType is the Output the loopback test wants: the text in the
// clipboard and typed into the focused window, both through the
// platform's output.
type copyAndType struct{ o platform.Output }

func (c copyAndType) Insert(text, _ string, restore bool) error {
	if err := c.o.Insert(text, platform.ModeCopy, restore); err != nil {
		return err
	}
	return c.o.Insert(text, platform.ModeType, false)
}

// setOutput sets the dictation output mode, without clean-up or clipboard
// restoring.
func setOutput(t testing.TB, a *App, mode string) {
	set, err := a.Settings.Get()
	require.NoError(t, err)
	set.OutputMode, set.Cleanup, set.RestoreClipboard = mode, false, false
	_, err = a.Settings.Update(set)
	require.NoError(t, err)
}

// TestDictationLoopback plays a kit clip into a PulseAudio null sink and
// dictates it for real through the app's pipeline: malgo captures the
// sink's monitor (the recording starts only once the clip is already
// audible, so its first word must come from the pre-roll), the VAD trims
// it, the kit model transcribes it, and the text lands in the X clipboard
// and is typed into a window.
func TestDictationLoopback(t *testing.T) {
	for _, bin := range []string{"xclip", "xdotool"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found: install the apt package %s", bin, bin)
		}
	}
	pa := pulsetest.Start(t)
	x11test.StartXvfb(t)
	win := x11test.NewWindow(t)
	want := kitText(t, loopbackClip)

	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	setOutput(t, a, platform.ModeCopy)
	cr := NewCaptureRecorder(nil)
	t.Cleanup(func() { cr.Close() })
	rec := &spyRecorder{CaptureRecorder: cr}
	a.SetRecorder(rec)
	a.SetOutput(copyAndType{platform.New().Output})
	require.NoError(t, cr.Arm(""))
	require.Contains(t, cr.rec.Device().Name, "vsink")

	play := pa.Play(t, shared.Path(t, "audio", loopbackClip+".wav"), "")
	// The hotkey comes late: once the speech is already audible.
	require.Eventually(t, func() bool { return cr.rec.Level().Peak > 0.05 }, shared.Wait(t, 10*time.Second), time.Millisecond)
	// 400 ms of wall time for > 250 ms of pre-roll: on a loaded CI machine
	// the sound server delivers audio in late bursts.
	time.Sleep(400 * time.Millisecond)
	t0 := time.Now()
	require.NoError(t, a.Dictation.Start())
	require.NoError(t, play.Wait())
	heardToTheEnd(t, cr)
	time.Sleep(300 * time.Millisecond)
	t1 := time.Now()
	it, err := a.Dictation.Stop()
	require.NoError(t, err, "transcribed and inserted")
	r := rec.recording()
	require.Greater(t, r.PreRollMs, int64(250), "pre-roll included")
	onDisk, err := audio.Load16k(it.AudioPath)
	require.NoError(t, err)
	peak := float32(0)
	for _, v := range onDisk[:r.PreRollMs*16] {
		peak = max(peak, v, -v)
	}
	require.Greater(t, peak, float32(0.05), "the speech before the hotkey is in the recording")

	st, err := a.Dictation.Status()
	require.NoError(t, err)
	text := st.LastText
	e := shared.WER(want, text)
	t.Logf("recording %d ms (pre-roll %d ms), %v from the hotkey, stop to text %v", it.DurationMs, r.PreRollMs, t1.Sub(t0), time.Since(t1))
	t.Logf("want %q\ngot  %q\nWER %.3f", want, text, e)
	require.LessOrEqual(t, e, 0.10, "word error rate")

	clip, err := exec.Command("xclip", "-selection", "clipboard", "-o").Output()
	require.NoError(t, err)
	require.Equal(t, text, string(clip), "clipboard")
	require.Eventually(t, func() bool { return win.Text() == text }, shared.Wait(t, 10*time.Second), 20*time.Millisecond,
		"typed into the window: %q", win.Text())

	// The recording is on disk, whole.
	require.Equal(t, a.RecordingsDir(), filepath.Dir(it.AudioPath))
	require.InDelta(t, r.DurationMs*16, len(onDisk), 16)
}

// samplesRecorder is a microphone that was already recorded: Start writes
// x as the item's WAV; Stop trims it with the VAD, as capture does.
type samplesRecorder struct{ x []float32 }

func (r *samplesRecorder) Start(opt RecordOptions) error {
	w, err := audio.CreateWAV(opt.Path, audio.WhisperRate)
	if err != nil {
		return err
	}
	if err := w.Write(r.x); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func (r *samplesRecorder) Stop() (Recording, error) {
	start, end, err := vad.Trim(r.x, vad.Config{})
	if err != nil {
		return Recording{}, err
	}
	return Recording{DurationMs: int64(len(r.x)) / 16, Samples: r.x[start:end]}, nil
}

func (r *samplesRecorder) Devices() ([]Device, error) { return []Device{}, nil }

// BenchmarkReleaseToText is the time from the hotkey's release to the text
// in the focused app for a 4.8-s kit utterance (with 300 ms of room tone
// either side, as a recording has), through the app's pipeline: VAD trim,
// transcription with the kit model from the shared runtime (CPU backend),
// output (copy: xclip; type: xdotool into an X window).
func BenchmarkReleaseToText(b *testing.B) {
	x11test.StartXvfb(b)
	x11test.NewWindow(b)
	clip, err := audio.Load16k(shared.Path(b, "audio", loopbackClip+".wav"))
	require.NoError(b, err)
	x := make([]float32, 0, len(clip)+9600)
	x = append(x, make([]float32, 4800)...)
	x = append(x, clip...)
	x = append(x, make([]float32, 4800)...)
	for i := range x {
		x[i] += float32(0.001 * math.Sin(float64(i)))
	}
	want := kitText(b, loopbackClip)
	for _, mode := range []string{platform.ModeCopy, platform.ModeType} {
		b.Run(mode, func(b *testing.B) {
			a := openApp(b, b.TempDir(), testModelsDir(b), nil)
			setOutput(b, a, mode)
			a.SetRecorder(&samplesRecorder{x: x})
			a.SetOutput(platform.New().Output)
			benchStops(b, a, func(it Item) { require.LessOrEqual(b, shared.WER(want, it.Text), 0.1) })
		})
	}
}

// streamClips, 1.2 s apart (a pause ends each utterance), make a 128-s
// dictation: past two minutes, so the stream's window must stay bounded
// over many utterances (it plays in real time: the longest test in CI).
var streamClips = []string{"jfk", "librispeech-1089-134686-0001", "librivox-sense-and-sensibility-0870",
	"ljspeech-LJ001-0004", "librispeech-1089-134691-0001", "librivox-sense-and-sensibility-0890",
	"ljspeech-LJ001-0001", "ljspeech-LJ001-0003", "ljspeech-LJ001-0014", "librispeech-1089-134686-0000",
	"ljspeech-LJ001-0015", "ljspeech-LJ001-0010", "ljspeech-LJ001-0007", "ljspeech-LJ001-0012"}

// TestDictationStreamLoopback dictates the concatenated clips through a
// PulseAudio null sink into the real capture pipeline: the preview events
// come while the audio plays (committed text only ever extended, a
// tentative tail), and at release the stored text is the stream's final
// transcript: the first clip's text word for word, and about as many words
// as the clips have (the kit model memorized whole clips only, so the rest
// is not compared word for word: its WER is logged).
func TestDictationStreamLoopback(t *testing.T) {
	pa := pulsetest.Start(t)
	dir := t.TempDir()
	wavPath := filepath.Join(dir, "clips.wav")
	w, err := audio.CreateWAV(wavPath, 16000)
	require.NoError(t, err)
	var want []string
	for _, c := range streamClips {
		x, err := audio.Load16k(shared.Path(t, "audio", c+".wav"))
		require.NoError(t, err)
		require.NoError(t, w.Write(x))
		require.NoError(t, w.Write(make([]float32, 19200)))
		want = append(want, kitText(t, c))
	}
	length := w.Duration()
	require.NoError(t, w.Close())
	require.Greater(t, length, 2*time.Minute, "the issue asks for a 2-minute concatenation")

	ev := newEvents()
	var played time.Time
	var firstAt atomic.Int64 // unix ns of the first preview with committed text
	ev.hook = func(name string, data any) {
		if name == "dictation:partial" && data.(PartialText).Committed != "" {
			firstAt.CompareAndSwap(0, time.Now().UnixNano())
		}
	}
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	// Unprompted: prompted with the text before it, the kit model (never
	// trained with a prompt) turns an utterance after the first into
	// memorized sentences of other clips (WER 0.86-0.90 prompted, measured
	// on the shared machine; engine/whisper's kit stream test streams the
	// long-form unprompted for the same reason).
	a.Dictation.streamConfig = whisper.StreamConfig{NoPrompt: true}
	cr := NewCaptureRecorder(nil)
	t.Cleanup(func() { cr.Close() })
	rec := &spyStreamed{CaptureRecorder: cr}
	a.SetRecorder(rec)
	require.NoError(t, cr.Arm(""))
	require.NoError(t, a.Dictation.Start())
	start := time.Now()
	play := pa.Play(t, wavPath, "")
	require.NoError(t, play.Wait())
	played = time.Now()
	heardToTheEnd(t, cr)
	time.Sleep(500 * time.Millisecond)
	released := time.Now()
	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	final := time.Since(released)

	firstCommit := time.Unix(0, firstAt.Load())
	require.NotNil(t, rec.got, "the final text came from the stream")
	require.Equal(t, rec.got.Text, it.Text)
	parts := ev.named("dictation:partial")
	require.GreaterOrEqual(t, len(parts), 3, "preview events while %v of audio played", length)
	require.NotZero(t, firstAt.Load(), "text was committed")
	require.True(t, firstCommit.Before(played), "text was committed while the audio played")
	prev := ""
	for _, p := range parts {
		m := p.(PartialText)
		require.True(t, strings.HasPrefix(m.Committed, prev), "committed text is only extended: %q then %q", prev, m.Committed)
		prev = m.Committed
	}
	require.True(t, strings.HasPrefix(it.Text, strings.TrimSpace(prev)), "the final text extends the committed preview")
	ref := strings.Join(want, " ")
	t.Logf("%v of audio played in %v; %d preview events, first commit %v after start; release to final %v",
		length, played.Sub(start).Round(time.Millisecond), len(parts), firstCommit.Sub(start).Round(time.Millisecond), final.Round(time.Millisecond))
	t.Logf("WER against the clips' text %.3f\n  want %q\n  got  %q", shared.WER(ref, it.Text), ref, it.Text)
	// The kit model knows a clip only from its own start: an utterance's
	// window starts up to a second before it (the lead-in kept after a
	// pause), where it often says another clip's sentence, so the text is
	// not compared word for word (WER 0.72 unprompted on the shared
	// machine). The first utterance's window is its clip's, and every
	// utterance must be transcribed: before the streamer fed long Writes
	// to the detector 100 ms at a time and Finish decoded a backlog a
	// window at a time, a slow decoder merged the utterances and lost all
	// but 30 s at release (42-80 words of the clips' 286).
	require.True(t, strings.HasPrefix(it.Text, want[0]), "the first utterance is its clip's text: %q", it.Text)
	nw, nref := len(strings.Fields(it.Text)), len(strings.Fields(ref))
	require.InDelta(t, nref, nw, 0.5*float64(nref), "every utterance is transcribed: %d words for the clips' %d", nw, nref)
}

// heardToTheEnd waits until the capture has delivered the silence after a
// clip whose playback has ended (exact silence from the null sink: every
// kit clip's quietest 10 ms peaks above 9e-4). On a loaded machine the
// capture's callbacks come hundreds of milliseconds late, and a recording
// stopped a fixed time after the playback ended could miss the clip's
// last words.
func heardToTheEnd(t *testing.T, cr *CaptureRecorder) {
	t.Helper()
	require.Eventually(t, func() bool { return cr.rec.Level().Peak < 1e-4 }, shared.Wait(t, 10*time.Second), time.Millisecond,
		"the capture did not deliver the silence after the clip")
}

//go:build linux && cgo

package overlay

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/app/platform/x11test"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/harkapp/hark/internal/shared"
)

// toneRecorder stands in for the microphone: Start writes a second of
// audio to the item's WAV, Stop reports its length.
type toneRecorder struct{ path string }

func (r *toneRecorder) Start(opt app.RecordOptions) error {
	w, err := audio.CreateWAV(opt.Path, 16000)
	if err != nil {
		return err
	}
	if err := w.Write(make([]float32, 16000)); err != nil {
		return err
	}
	r.path = opt.Path
	return w.Close()
}

func (r *toneRecorder) Stop() (app.Recording, error) { return app.Recording{DurationMs: 1000}, nil }
func (r *toneRecorder) Devices() ([]app.Device, error) {
	return []app.Device{{ID: "t", Name: "tone", Default: true}}, nil
}

// events collects the app's events besides feeding the overlay.
type events struct {
	mu    sync.Mutex
	names []string
}

func (e *events) add(n string) { e.mu.Lock(); e.names = append(e.names, n); e.mu.Unlock() }

func (e *events) has(n string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, x := range e.names {
		if x == n {
			return true
		}
	}
	return false
}

// TestOverlayUnderXvfb runs the real app's dictation with the GTK overlay
// on Xvfb: the panel appears at the bottom centre when recording starts,
// shows the streamed text (committed and tentative) and the state, a click
// asks to stop, and Esc (grabbed globally while recording) cancels: the
// recording stays in History and nothing is inserted; the panel then
// fades out. The streamed text is first given as the app's live stream
// sends it ("dictation:partial"), then comes from the real stream
// (liveStream).
func TestOverlayUnderXvfb(t *testing.T) {
	for _, bin := range []string{"xdotool", "import"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found: install the apt packages xdotool and imagemagick", bin)
		}
	}
	x11test.StartXvfb(t)
	var a *app.App
	var stops atomic.Int32
	ov, err := New(Options{
		OnStop:   func() { stops.Add(1) },
		OnCancel: func() { require.NoError(t, a.Dictation.Cancel()) },
		Esc:      platform.NewHotkey(),
	}, false)
	require.NoError(t, err)
	t.Cleanup(shutdownLoop) // before Xvfb goes (cleanups run last first)
	t.Cleanup(ov.Close)
	ev := &events{}
	a, err = app.New(app.Config{DataDir: t.TempDir(), ModelsDir: t.TempDir(), NoSpeedProbe: true, Recorder: &toneRecorder{},
		Emitter: app.EmitterFunc(func(name string, data any) { ev.add(name); ov.Handle(name, data) })})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })

	text, visible, _, _, _, _ := shown()
	require.False(t, visible && text != "", "no panel before a dictation")
	require.NoError(t, a.Dictation.Start())
	st, _ := a.Dictation.Status()
	require.Eventually(t, func() bool { s, v, _, _, _, _ := shown(); return v && strings.Contains(s, Starting) },
		shared.Wait(t, 5*time.Second), 10*time.Millisecond, "the panel says starting… until the first sample")

	ov.Handle("dictation:level", app.Level{RMS: 0.2, Peak: 0.5})
	ov.Handle("dictation:partial", app.PartialText{Committed: " And so, my fellow Americans,", Tentative: " ask not"})
	var x, y, w, h int
	require.Eventually(t, func() bool {
		text, visible, x, y, w, h = shown()
		return visible && strings.Contains(text, "And so, my fellow Americans, ask not") && strings.Contains(text, Listening)
	}, shared.Wait(t, 5*time.Second), 10*time.Millisecond)
	t.Logf("panel %dx%d at %d,%d: %q", w, h, x, y, text)
	require.InDelta(t, 400, x+w/2, 2, "centred on the 800-pixel screen")
	require.Greater(t, y, 300, "in the bottom half")
	require.Regexp(t, `0:0\d`, text, "elapsed time")
	time.Sleep(400 * time.Millisecond) // the labels are set; let GTK paint them
	screenshot(t, x, y, w, h)

	// A click asks to stop.
	out, err := exec.Command("xdotool", "mousemove", strconv.Itoa(x+w/2), strconv.Itoa(y+h/2), "click", "1").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Eventually(t, func() bool { return stops.Load() == 1 }, shared.Wait(t, 5*time.Second), 10*time.Millisecond, "a click stops")

	// Esc cancels (grabbed while recording, the key goes to the overlay
	// whatever window has the focus).
	out, err = exec.Command("xdotool", "key", "Escape").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Eventually(t, func() bool { return ev.has("dictation:canceled") }, shared.Wait(t, 5*time.Second), 10*time.Millisecond, "Esc cancels")
	it, err := a.History.Get(st.ItemID)
	require.NoError(t, err)
	require.Equal(t, app.StatusRecorded, it.Status, "the recording stays in History")
	require.Empty(t, it.Text)
	require.False(t, ev.has("dictation:done"), "nothing was transcribed or inserted")
	require.Eventually(t, func() bool { s, _, _, _, _, _ := shown(); return strings.Contains(s, Canceled) }, shared.Wait(t, 5*time.Second), 10*time.Millisecond)
	require.Eventually(t, func() bool { _, v, _, _, _, _ := shown(); return !v }, shared.Wait(t, 5*time.Second), 20*time.Millisecond, "the panel fades out")

	// Esc is the user's again once the recording is over: another client
	// can grab it.
	other := platform.NewHotkey()
	require.Eventually(t, func() bool { return other.Register("Escape", func() {}, nil) == nil }, shared.Wait(t, 3*time.Second), 50*time.Millisecond,
		"Esc is grabbed only while recording")
	require.NoError(t, other.Unregister())

	ov.Close()
	t.Run("live stream", liveStream)
	t.Run("near the caret", nearCaret)
}

// screenshot saves the panel: to a temp folder, or to the tracked
// docs/screenshots when HARK_UPDATE_SCREENSHOTS=1 (as the browser test).
func screenshot(t *testing.T, x, y, w, h int) { screenshotAs(t, "overlay.png", x, y, w, h) }

func screenshotAs(t *testing.T, name string, x, y, w, h int) {
	dir := t.TempDir()
	if os.Getenv("HARK_UPDATE_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "..", "docs", "screenshots")
	}
	path := filepath.Join(dir, name)
	// A margin of desktop around the panel, for context.
	geom := strconv.Itoa(w+40) + "x" + strconv.Itoa(h+40) + "+" + strconv.Itoa(max(0, x-20)) + "+" + strconv.Itoa(max(0, y-20))
	out, err := exec.Command("import", "-window", "root", "-crop", geom, "+repage", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Positive(t, fi.Size())
	t.Logf("screenshot %s", path)
}

// liveStream dictates a kit clip through a PulseAudio null sink into the
// real capture pipeline and live stream: the panel shows the stream's
// committed text as it comes, then Esc cancels. (Part of
// TestOverlayUnderXvfb: the overlay's GTK loop lives on that test's X
// server.)
func liveStream(t *testing.T) {
	pa := pulsetest.Start(t)
	models := t.TempDir()
	// A hard link (the models store lists regular files), else a copy.
	src, dst := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"), filepath.Join(models, "kit.bin")
	if os.Link(src, dst) != nil {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, b, 0o644))
	}
	var a *app.App
	ov, err := New(Options{OnCancel: func() { a.Dictation.Cancel() }, Esc: platform.NewHotkey()}, false)
	require.NoError(t, err)
	defer ov.Close()
	var mu sync.Mutex
	seen := map[string]bool{} // the texts the stream sent, as the panel composes them
	rec := app.NewCaptureRecorder(nil)
	t.Cleanup(func() { rec.Close() })
	ev := &events{}
	a, err = app.New(app.Config{DataDir: t.TempDir(), ModelsDir: models, NoSpeedProbe: true, Threads: 2, Recorder: rec,
		Emitter: app.EmitterFunc(func(name string, data any) {
			ev.add(name)
			if p, ok := data.(app.PartialText); ok && name == "dictation:partial" {
				mu.Lock()
				c, t := streamed(p.Committed, p.Tentative)
				seen[c+t] = true
				mu.Unlock()
			}
			ov.Handle(name, data)
		})})
	require.NoError(t, err)
	defer a.Close()

	require.NoError(t, a.Dictation.Start())
	// The clip, then a pause (a null sink's monitor delivers nothing while
	// nothing plays: the stream needs the silence to end the utterance).
	clip, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	wav := filepath.Join(t.TempDir(), "jfk-pause.wav")
	w, err := audio.CreateWAV(wav, 16000)
	require.NoError(t, err)
	require.NoError(t, w.Write(append(clip, make([]float32, 3*16000)...)))
	require.NoError(t, w.Close())
	pa.Play(t, wav, "")
	var last string
	deadline := time.Now().Add(shared.Wait(t, 60*time.Second))
	for {
		last, _, _, _, _, _ = shown()
		head, body, _ := strings.Cut(last, "\n")
		mu.Lock()
		ok, n := body != "" && seen[body], len(seen)
		mu.Unlock()
		if ok && strings.Contains(head, Listening) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the panel does not show the stream's text: it shows %q; %d texts streamed", last, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("panel: %q", last)
	out, err := exec.Command("xdotool", "key", "Escape").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Eventually(t, func() bool { return ev.has("dictation:canceled") }, shared.Wait(t, 10*time.Second), 10*time.Millisecond, "Esc cancels")
	require.False(t, ev.has("dictation:done"))
}

package overlay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/internal/place"
	"github.com/harkapp/hark/internal/shared"
)

type fakeView struct {
	mu     sync.Mutex
	frames []Frame
}

func (v *fakeView) show(f Frame) { v.mu.Lock(); v.frames = append(v.frames, f); v.mu.Unlock() }
func (v *fakeView) close()       {}
func (v *fakeView) last() Frame {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.frames[len(v.frames)-1]
}

type fakeKey struct {
	mu      sync.Mutex
	grabbed string
}

func (k *fakeKey) Register(spec string, _, _ func()) error {
	k.mu.Lock()
	k.grabbed = spec
	k.mu.Unlock()
	return nil
}
func (k *fakeKey) Unregister() error { k.mu.Lock(); k.grabbed = ""; k.mu.Unlock(); return nil }
func (k *fakeKey) held() string      { k.mu.Lock(); defer k.mu.Unlock(); return k.grabbed }

// TestOverlayStates follows a dictation's events: starting until sound
// arrives, listening with the streamed text, finishing, inserted, then the
// fade; Esc is grabbed only while recording.
func TestOverlayStates(t *testing.T) {
	v, esc := &fakeView{}, &fakeKey{}
	o := newOverlay(v, Options{OnCancel: func() {}, OnStop: func() {}, Esc: esc})
	now := time.Unix(1000, 0)
	o.nowForTT = func() time.Time { return now }

	o.Handle("dictation:state", app.DictationStatus{State: app.DictRecording, StartedAt: now.UnixMilli(), Mode: "Email"})
	require.Equal(t, Frame{Visible: true, Opacity: 1, Header: "● starting… · Email · 0:00"}, v.last())
	require.Equal(t, "Escape", esc.held())
	o.Handle("dictation:level", app.Level{RMS: 0, Peak: 0})
	require.Contains(t, v.last().Header, Starting, "no sound yet")
	now = now.Add(7 * time.Second)
	o.Handle("dictation:level", app.Level{RMS: 0.1, Peak: 0.3})
	require.Equal(t, "● listening · Email · 0:07", v.last().Header)
	require.InDelta(t, 0.67, v.last().Level, 0.01)
	o.Handle("dictation:partial", app.PartialText{Committed: " Dear Ann,", Tentative: " thanks <for>"})
	require.Equal(t, `Dear Ann,<span alpha="50%"> thanks &lt;for&gt;</span>`, v.last().Markup())
	o.Handle("dictation:warning", app.Warning{Message: "recording continues on USB mic"})
	require.Contains(t, v.last().Markup(), "<i>recording continues on USB mic</i>")

	o.Handle("dictation:state", app.DictationStatus{State: app.DictTranscribing})
	require.Contains(t, v.last().Header, Finishing)
	require.Eventually(t, func() bool { return esc.held() == "" }, shared.Wait(t, time.Second), time.Millisecond, "Esc is given back")
	o.Handle("dictation:done", app.Item{Text: "Dear Ann, thanks for."})
	f := v.last()
	require.Contains(t, f.Header, Inserted)
	require.Equal(t, "Dear Ann, thanks for.", f.Committed)
	require.Eventually(t, func() bool { return !v.last().Visible }, shared.Wait(t, 3*time.Second), 10*time.Millisecond, "it fades after insertion")

	// An error shows, then fades; a new recording starts afresh.
	o.Handle("dictation:state", app.DictationStatus{State: app.DictRecording})
	require.Equal(t, "", v.last().Committed)
	o.Handle("dictation:state", app.DictationStatus{State: app.DictIdle, Error: "no speech was heard"})
	require.Contains(t, v.last().Header, Failed)
	require.Contains(t, v.last().Markup(), "no speech was heard")
	require.Eventually(t, func() bool { return !v.last().Visible }, shared.Wait(t, 3*time.Second), 10*time.Millisecond)
}

// TestOverlayClick: a click stops a recording, and does nothing after.
func TestOverlayClick(t *testing.T) {
	stops := make(chan struct{}, 2)
	o := newOverlay(&fakeView{}, Options{OnStop: func() { stops <- struct{}{} }})
	o.Handle("dictation:state", app.DictationStatus{State: app.DictRecording})
	o.clicked()
	<-stops
	o.Handle("dictation:state", app.DictationStatus{State: app.DictTranscribing})
	o.clicked()
	time.Sleep(50 * time.Millisecond)
	require.Empty(t, stops)
}

// TestOverlayBetterText: "type now, perfect later" shows the text that
// replaced the inserted one, or offers it with its copy keystroke until it
// is copied; an offer never covers a recording in progress.
func TestOverlayBetterText(t *testing.T) {
	v := &fakeView{}
	o := newOverlay(v, Options{})

	o.Handle("dictation:better", app.BetterText{Text: "Dear Ann, thanks for the notes.", Replaced: true})
	require.Contains(t, v.last().Header, Improved)
	require.Equal(t, "Dear Ann, thanks for the notes.", v.last().Committed)
	require.Eventually(t, func() bool { return !v.last().Visible }, shared.Wait(t, 3*time.Second), 10*time.Millisecond, "it fades")

	o.Handle("dictation:better", app.BetterText{Text: "Better.", Hotkey: "Ctrl+Alt+B"})
	f := v.last()
	require.True(t, f.Visible)
	require.Contains(t, f.Header, Better)
	require.Contains(t, f.Markup(), "press Ctrl+Alt+B to copy it")
	time.Sleep(2 * fadeAfter)
	require.True(t, v.last().Visible, "an offer stays longer than a final state")
	o.Handle("dictation:better-copied", app.BetterText{Text: "Better."})
	require.Contains(t, v.last().Header, Copied)
	require.Eventually(t, func() bool { return !v.last().Visible }, shared.Wait(t, 3*time.Second), 10*time.Millisecond)

	o.Handle("dictation:better", app.BetterText{Text: "Offer."})
	o.Handle("dictation:better-withdrawn", app.BetterText{Text: "Offer."})
	require.False(t, v.last().Visible, "a withdrawn offer disappears at once")

	o.Handle("dictation:state", app.DictationStatus{State: app.DictRecording})
	o.Handle("dictation:better", app.BetterText{Text: "Late."})
	require.Contains(t, v.last().Header, Starting, "a recording keeps the panel")
	require.Empty(t, v.last().Committed)
	o.Close()
}

// TestOverlayNearCaret: in caret mode the panel waits for the lookup and
// then goes below the caret (the view gets it in every frame, the better
// text's too); without a caret it goes to the bottom centre, logged once;
// the bottom setting makes no lookup.
func TestOverlayNearCaret(t *testing.T) {
	v := &fakeView{}
	var mu sync.Mutex
	lookups := 0
	release := make(chan struct{})
	var answer error
	caret := place.Rect{X: 100, Y: 80, H: 17}
	logs := make(chan string, 10)
	o := newOverlay(v, Options{Position: app.OverlayCaret, Caret: func(ctx context.Context) (place.Rect, error) {
		mu.Lock()
		lookups++
		err := answer
		mu.Unlock()
		<-release
		return caret, err
	}, Logf: func(f string, a ...any) { logs <- fmt.Sprintf(f, a...) }})

	o.Handle("dictation:state", app.DictationStatus{State: app.DictRecording})
	o.Handle("dictation:level", app.Level{RMS: 0.1})
	v.mu.Lock()
	waited := len(v.frames) == 0
	v.mu.Unlock()
	require.True(t, waited, "the panel waits for the caret")
	release <- struct{}{}
	require.Eventually(t, func() bool { v.mu.Lock(); defer v.mu.Unlock(); return len(v.frames) > 0 }, shared.Wait(t, time.Second), time.Millisecond)
	require.Equal(t, &caret, v.last().Caret)
	require.Contains(t, v.last().Header, Listening)
	o.Handle("dictation:done", app.Item{Text: "Dear Ann"})
	require.Equal(t, &caret, v.last().Caret)
	o.Handle("dictation:better", app.BetterText{Text: "Dear Ann,"})
	require.Equal(t, &caret, v.last().Caret, "the better text shows where the dictation did")

	// No caret: the bottom centre, said once.
	mu.Lock()
	answer = errors.New("no focused widget")
	mu.Unlock()
	for range 2 {
		o.Handle("dictation:canceled", nil)
		o.Handle("dictation:state", app.DictationStatus{State: app.DictRecording})
		release <- struct{}{}
		require.Eventually(t, func() bool { f := v.last(); return f.Visible && f.Caret == nil && strings.Contains(f.Header, Starting) },
			shared.Wait(t, time.Second), time.Millisecond)
	}
	require.Len(t, logs, 1, "said once")
	require.Contains(t, <-logs, "no focused widget")

	// The bottom setting: no lookup, shown at once.
	o.Handle(app.EventSettingsChanged, app.SettingsData{OverlayPosition: app.OverlayBottom})
	o.Handle("dictation:canceled", nil)
	o.Handle("dictation:state", app.DictationStatus{State: app.DictRecording})
	require.Contains(t, v.last().Header, Starting, "shown at once")
	require.Nil(t, v.last().Caret)
	mu.Lock()
	require.Equal(t, 3, lookups)
	mu.Unlock()
	o.Close()
}

package desktop

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/internal/shared"
)

// fakeHotkey records the binding the shell made.
type fakeHotkey struct {
	mu       sync.Mutex
	spec     string
	down, up func()
	bound    bool
}

func (h *fakeHotkey) Register(spec string, down, up func()) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.spec, h.down, h.up, h.bound = spec, down, up, true
	return nil
}

func (h *fakeHotkey) Unregister() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bound = false
	return nil
}

func (h *fakeHotkey) state() (spec string, push, bound bool, down func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.spec, h.up != nil, h.bound, h.down
}

// fakeTray records the menu and the recording light.
type fakeTray struct {
	mu        sync.Mutex
	menu      platform.TrayMenu
	recording bool
	removed   bool
}

func (t *fakeTray) Show(m platform.TrayMenu) error {
	t.mu.Lock()
	t.menu = m
	t.mu.Unlock()
	return nil
}
func (t *fakeTray) SetRecording(on bool)      { t.mu.Lock(); t.recording = on; t.mu.Unlock() }
func (t *fakeTray) SetRecent([]string)        {}
func (t *fakeTray) SetModes([]string, string) {}
func (t *fakeTray) SetTranscribing(bool)      {}
func (t *fakeTray) Remove()                   { t.mu.Lock(); t.removed = true; t.mu.Unlock() }

// sink keeps the events the shell sends to the page.
type sink struct {
	mu  sync.Mutex
	got []string
}

func (s *sink) send(name string, data any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := data.(app.Problem); ok {
		name += " " + p.Error
	}
	s.got = append(s.got, name)
}

func (s *sink) has(prefix string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.got {
		if len(g) >= len(prefix) && g[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

// newShell is a shell over a fresh app (no microphone) and fake OS
// pieces, attached as the window's startup does.
func newShell(t *testing.T) (*Shell, *fakeHotkey, *fakeTray, *sink) {
	out := &sink{}
	sh := &Shell{send: out.send}
	a, err := app.New(app.Config{DataDir: t.TempDir(), ModelsDir: t.TempDir(), Emitter: app.EmitterFunc(sh.emit), NoSpeedProbe: true})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	sh.app = a
	hk, tray := &fakeHotkey{}, &fakeTray{}
	sh.attachPlatform(platform.Platform{Hotkey: hk, Tray: tray})
	return sh, hk, tray, out
}

// The hotkey follows the settings: bound at start in toggle mode, bound
// again for push-to-talk when the mode changes, and its press reaches
// the dictation service (whose error, without a microphone, is shown in
// the window).
func TestHotkeyFollowsSettings(t *testing.T) {
	sh, hk, _, out := newShell(t)
	st, err := sh.app.Settings.Get()
	require.NoError(t, err)
	spec, push, bound, down := hk.state()
	require.True(t, bound)
	require.Equal(t, st.Hotkey, spec)
	require.False(t, push, "toggle mode: no release action")

	down()
	require.True(t, out.has("app:error dictation is not available"), "the press reached Dictation: %v", out.got)

	st.HotkeyMode, st.Hotkey = "push", "Ctrl+Alt+D"
	_, err = sh.app.Settings.Update(st)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		spec, push, bound, _ := hk.state()
		return bound && push && spec == "Ctrl+Alt+D"
	}, shared.Wait(t, 5*time.Second), 10*time.Millisecond, "push-to-talk binds the release too")
}

// The menu-bar item toggles dictation, shows the recording state, and is
// given back with the hotkey on quit; with it shown, closing the window
// only hides it (menu-bar app), without it the close goes through.
func TestTrayAndQuit(t *testing.T) {
	sh, hk, tray, out := newShell(t)
	require.True(t, sh.Tray)
	tray.menu.OnToggleDictation()
	require.True(t, out.has("app:error dictation is not available"))

	sh.emit("dictation:state", app.DictationStatus{State: app.DictRecording})
	tray.mu.Lock()
	require.True(t, tray.recording)
	tray.mu.Unlock()
	sh.emit("dictation:state", app.DictationStatus{State: app.DictIdle})
	tray.mu.Lock()
	require.False(t, tray.recording)
	tray.mu.Unlock()

	sh.Tray = false
	require.False(t, sh.beforeClose(t.Context()), "no menu-bar item: closing quits")
	sh.Tray = true
	sh.quitting.Store(true)
	require.False(t, sh.beforeClose(t.Context()), "Quit closes for real")

	sh.detachPlatform()
	_, _, bound, _ := hk.state()
	require.False(t, bound, "hotkey given back")
	require.True(t, tray.removed, "menu-bar item removed")
}

// The dialogs offer what the readers read, the lists the page's pickers
// get too (app/apigen's TestPickersUseTheGeneratedLists).
func TestDialogPatterns(t *testing.T) {
	p := dialogPattern(audio.Extensions())
	require.True(t, strings.HasPrefix(p, "*.wav;*.mp3;"), p)
	for _, e := range []string{"*.m4a", "*.mp4", "*.mov", "*.webm"} {
		require.Contains(t, strings.Split(p, ";"), e)
	}
	require.Len(t, strings.Split(p, ";"), len(audio.Extensions()))
	require.Equal(t, "*.bin;*.gguf", dialogPattern(models.Extensions))
}

package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/control"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/internal/shared"
)

// TestControlSocketDictation drives dictation through the data folder's
// control socket, as `hark dictate` does: start, cancel (nothing inserted,
// the recording kept in History), start and stop (the transcript comes
// back), paste-last; and after Close nothing answers.
func TestControlSocketDictation(t *testing.T) {
	ev := newEvents()
	dir := t.TempDir()
	a := openApp(t, dir, testModelsDir(t), ev)
	sink := &textSink{}
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")})
	a.SetOutput(sink)

	sock := filepath.Join(dir, control.SocketName)
	fi, err := os.Stat(sock)
	require.NoError(t, err, "the socket is in the data folder")
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	_, err = os.Stat(filepath.Join(dir, lockName))
	require.NoError(t, err, "beside the single-instance lock")

	send := func(cmd string) (control.Reply, error) { return control.Send(dir, cmd, shared.Wait(t, time.Minute)) }
	r, err := send("status")
	require.NoError(t, err)
	require.Equal(t, DictIdle, r.State)
	_, err = send("paste-last")
	require.ErrorContains(t, err, "nothing has been dictated")

	r, err = send("start")
	require.NoError(t, err)
	require.Equal(t, DictRecording, r.State)
	st, _ := a.Dictation.Status()
	id := st.ItemID
	r, err = send("cancel")
	require.NoError(t, err)
	require.Equal(t, DictIdle, r.State)
	ev.wait(t, "dictation:canceled", nil, time.Second)
	it, err := a.History.Get(id)
	require.NoError(t, err, "a canceled recording stays in History")
	require.Equal(t, StatusRecorded, it.Status)
	require.Empty(t, it.Text, "nothing was transcribed")
	require.Positive(t, it.DurationMs)
	require.Empty(t, sink.texts, "nothing was inserted")
	_, err = send("cancel")
	require.ErrorContains(t, err, "not recording")

	_, err = send("start")
	require.NoError(t, err)
	r, err = send("stop")
	require.NoError(t, err)
	want := kitText(t, "jfk")
	require.Equal(t, want, r.Text, "stop answers with the transcript")
	require.Equal(t, DictIdle, r.State)
	r, err = send("status")
	require.NoError(t, err)
	require.Equal(t, want, r.Text)
	_, err = send("paste-last")
	require.NoError(t, err)
	require.Equal(t, []string{want, want}, sink.texts)

	// toggle starts, and stops in the background.
	r, err = send("toggle")
	require.NoError(t, err)
	require.Equal(t, DictRecording, r.State)
	_, err = send("toggle")
	require.NoError(t, err)
	require.Eventually(t, func() bool { r, _ := send("status"); return r.State == DictIdle }, shared.Wait(t, time.Minute), 20*time.Millisecond)

	require.NoError(t, a.Close())
	_, err = send("status")
	require.ErrorIs(t, err, control.ErrNotRunning)
}

func TestHotkeyHintWayland(t *testing.T) {
	d := &Dictation{}
	t.Setenv("WAYLAND_DISPLAY", "")
	t.Setenv("XDG_SESSION_TYPE", "x11")
	require.Empty(t, d.HotkeyHint())
	t.Setenv("WAYLAND_DISPLAY", "wayland-0")
	require.Contains(t, d.HotkeyHint(), "hark dictate toggle")
}

func TestPasteLastHotkeySetting(t *testing.T) {
	d := defaultSettings()
	require.Empty(t, d.PasteLastHotkey, "off by default")
	d.PasteLastHotkey = "Ctrl+Alt+L"
	require.NoError(t, d.validate())
	d.PasteLastHotkey = d.BetterHotkey // the better-text hotkey's default
	require.ErrorContains(t, d.validate(), "pasteLastHotkey")
	d.PasteLastHotkey = d.Hotkey
	require.ErrorContains(t, d.validate(), "pasteLastHotkey")
	// The same keys written differently, and the other hotkeys, clash too.
	d.Hotkey, d.PasteLastHotkey = "Ctrl+Shift+V", "shift + ctrl + v"
	require.ErrorContains(t, d.validate(), "pasteLastHotkey")
	d.Hotkey, d.ModeHotkey, d.PasteLastHotkey = "Ctrl+Alt+Space", "Ctrl+Alt+M", "alt+ctrl+m"
	require.ErrorContains(t, d.validate(), "pasteLastHotkey")
}

// TestControlStopPrintsInserted: `hark dictate stop` answers with the text
// that was inserted (the replacements applied), not the raw transcript,
// and a toggle that stops answers with the new state.
func TestControlStopPrintsInserted(t *testing.T) {
	dir := t.TempDir()
	a := openApp(t, dir, testModelsDir(t), newEvents())
	sink := &textSink{}
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")})
	a.SetOutput(sink)
	s, err := a.Settings.Get()
	require.NoError(t, err)
	s.Replacements = []rewrite.Rule{{From: "country", To: "nation", WholeWord: true}}
	_, err = a.Settings.Update(s)
	require.NoError(t, err)
	send := func(cmd string) (control.Reply, error) { return control.Send(dir, cmd, shared.Wait(t, time.Minute)) }

	_, err = send("start")
	require.NoError(t, err)
	r, err := send("stop")
	require.NoError(t, err)
	require.Len(t, sink.texts, 1)
	require.Equal(t, sink.texts[0], r.Text, "stop prints what was inserted")
	require.Contains(t, r.Text, "your nation")
	require.NotEqual(t, kitText(t, "jfk"), r.Text)

	r, err = send("toggle")
	require.NoError(t, err)
	require.Equal(t, DictRecording, r.State)
	r, err = send("toggle")
	require.NoError(t, err)
	require.Equal(t, DictTranscribing, r.State, "a toggle that stops answers with the new state")
	require.Eventually(t, func() bool { r, _ := send("status"); return r.State == DictIdle }, shared.Wait(t, time.Minute), 20*time.Millisecond)
}

package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/modes"
	"github.com/harkapp/hark/internal/shared"
)

// The mode hotkey cycles the modes and automatic; a mode chosen by hand
// (hotkey, menu or SetMode) beats the focused app's rule for every
// dictation until "Automatic" is chosen again.
func TestModeSwitchByHand(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	focus := &fixedFocus{app: "Slack"}
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")})
	a.SetOutput(&textSink{})
	a.SetFocus(focus)

	s, err := a.Settings.Get()
	require.NoError(t, err)
	s.Modes = []modes.Mode{{Name: "Chat", Apps: []string{"slack"}}, {Name: "Email"}}
	s.ModeHotkey = "Ctrl+Alt+M"
	_, err = a.Settings.Update(s)
	require.NoError(t, err)

	// The hotkey's cycle: Chat, Email, automatic, Chat.
	var got []string
	for range 4 {
		c, err := a.Settings.CycleMode()
		require.NoError(t, err)
		require.Equal(t, []string{"Chat", "Email"}, c.Modes)
		got = append(got, c.Active)
	}
	require.Equal(t, []string{"Chat", "Email", "", "Chat"}, got)
	changed := ev.named("mode:changed")
	require.Len(t, changed, 4)
	require.Equal(t, ModeChoice{Modes: []string{"Chat", "Email"}, Active: "Chat"}, changed[3])
	stored, err := a.Settings.Get()
	require.NoError(t, err)
	require.Equal(t, "Chat", stored.ActiveMode, "the choice is stored with the settings")

	// The menu's pick, by name in any case; unknown names are refused.
	c, err := a.Settings.SetMode("email")
	require.NoError(t, err)
	require.Equal(t, "Email", c.Active)
	_, err = a.Settings.SetMode("Nope")
	require.ErrorContains(t, err, `mode "Nope" does not exist`)
	c, err = a.Settings.Modes()
	require.NoError(t, err)
	require.Equal(t, "Email", c.Active, "a refused pick changes nothing")

	// Sticky: Email for two dictations although Slack (Chat's app) has the focus.
	for range 2 {
		require.NoError(t, a.Dictation.Start())
		st, _ := a.Dictation.Status()
		require.Equal(t, "Email", st.Mode)
		it, err := a.Dictation.Stop()
		require.NoError(t, err)
		require.Equal(t, "Email", it.Mode)
	}
	// Automatic again: the focused app decides.
	c, err = a.Settings.SetMode(modes.Automatic)
	require.NoError(t, err)
	require.Equal(t, "", c.Active)
	require.NoError(t, a.Dictation.Start())
	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	require.Equal(t, "Chat", it.Mode)
}

func TestModeHotkeyValidation(t *testing.T) {
	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	s, err := a.Settings.Get()
	require.NoError(t, err)
	s.Hotkey = "Ctrl+Alt+Space"
	s.ModeHotkey = "alt + ctrl + SPACE"
	_, err = a.Settings.Update(s)
	require.ErrorContains(t, err, "is the dictation hotkey")
	s.ModeHotkey = "Ctrl+Alt+M"
	_, err = a.Settings.Update(s)
	require.NoError(t, err)
	require.False(t, sameHotkey("Ctrl+M", "Ctrl+Alt+M"))
}

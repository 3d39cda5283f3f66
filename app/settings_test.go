package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSettingsPersistAcrossReopen(t *testing.T) {
	data, mdir := t.TempDir(), t.TempDir()
	ev := newEvents()
	a, err := New(Config{DataDir: data, ModelsDir: mdir, Emitter: ev, NoSpeedProbe: true})
	require.NoError(t, err)

	s, err := a.Settings.Get()
	require.NoError(t, err)
	require.Equal(t, defaultSettings(), s, "a fresh data folder has the defaults")
	require.False(t, s.LaunchAtLogin, "launch at login is opt-in")

	s.HotkeyMode = "push"
	s.Language = "de"
	s.ChatModel = "stories"
	s.OutputMode = "copy"
	s.RetentionDays = 30
	s.IdleUnloadMinutes = 3
	s.Cleanup = true
	s.CleanupPrompt = "Fix it."
	s.Theme = "dark"
	s.OverlayPosition = OverlayCaret
	got, err := a.Settings.Update(s)
	require.NoError(t, err)
	require.Equal(t, s, got)
	require.Len(t, ev.named("settings:changed"), 1)

	// Bad values are refused and change nothing.
	for _, bad := range []func(*SettingsData){
		func(d *SettingsData) { d.HotkeyMode = "hold" },
		func(d *SettingsData) { d.Language = "xx" },
		func(d *SettingsData) { d.OutputMode = "print" },
		func(d *SettingsData) { d.RetentionDays = -1 },
		func(d *SettingsData) { d.ServerAddr = "nope" },
		func(d *SettingsData) { d.Theme = "pink" },
		func(d *SettingsData) { d.OverlayPosition = "top" },
		func(d *SettingsData) { d.OverlayPosition = "" },
	} {
		b := s
		bad(&b)
		_, err := a.Settings.Update(b)
		require.Error(t, err)
	}
	require.NoError(t, a.Close())

	b, err := New(Config{DataDir: data, ModelsDir: mdir, NoSpeedProbe: true})
	require.NoError(t, err)
	defer b.Close()
	again, err := b.Settings.Get()
	require.NoError(t, err)
	require.Equal(t, s, again, "settings survive closing and reopening the data folder")
	dir, err := b.Settings.DataDir()
	require.NoError(t, err)
	require.Equal(t, data, dir)
}

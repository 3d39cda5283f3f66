package permissions

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMicStatus(t *testing.T) {
	require.Equal(t, Undetermined, micStatus(0))
	require.Equal(t, Denied, micStatus(1))
	require.Equal(t, Denied, micStatus(2))
	require.Equal(t, Granted, micStatus(3))
	require.Equal(t, Unsupported, micStatus(4))
	require.Equal(t, Unsupported, micStatus(-1))
}

func TestAXStatus(t *testing.T) {
	require.Equal(t, Granted, axStatus(true))
	require.Equal(t, Denied, axStatus(false))
}

func TestSettingsURL(t *testing.T) {
	u, err := SettingsURL(Microphone)
	require.NoError(t, err)
	require.Equal(t, "x-apple.systempreferences:com.apple.preference.security?Privacy_Microphone", u)
	u, err = SettingsURL(Accessibility)
	require.NoError(t, err)
	require.Equal(t, "x-apple.systempreferences:com.apple.preference.security?Privacy_Accessibility", u)
	u, err = SettingsURL(InputMonitoring)
	require.NoError(t, err)
	require.Equal(t, "x-apple.systempreferences:com.apple.preference.security?Privacy_ListenEvent", u)
	_, err = SettingsURL("camera")
	require.ErrorContains(t, err, `unknown pane "camera"`)
}

//go:build linux

package platform

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Linux Settings offers only what works here: launch at login, not the
// macOS menu-bar icon, Dock icon or "put hark on PATH"; and the list says
// what New builds.
func TestSupportedFeaturesLinux(t *testing.T) {
	f := Supported()
	require.Equal(t, Features{LaunchAtLogin: true}, f)
	p := New()
	require.Equal(t, p.Dock != nil, f.DockIcon, "a Dock switch exactly where there is a Dock")
	require.Equal(t, p.Tray.Show(TrayMenu{}) == nil, f.MenuBarIcon, "a menu-bar switch exactly where the tray shows")
	require.Equal(t, p.Login != nil, f.LaunchAtLogin)
}

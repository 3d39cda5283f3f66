package app

import (
	"os"
	"runtime"
)

// HotkeyHint is what Settings shows where apps get no global hotkey: on
// Wayland, a desktop shortcut bound to `hark dictate toggle` (the control
// socket, app/control) does the hotkey's job. "" elsewhere.
func (d *Dictation) HotkeyHint() string {
	if runtime.GOOS != "linux" || (os.Getenv("WAYLAND_DISPLAY") == "" && os.Getenv("XDG_SESSION_TYPE") != "wayland") {
		return ""
	}
	return "Wayland gives apps no global hotkey: bind a desktop shortcut (Settings > Keyboard > Custom Shortcuts in GNOME and KDE) to the command `hark dictate toggle`."
}

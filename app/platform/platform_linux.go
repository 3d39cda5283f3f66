package platform

// New builds the Linux platform: an X11 global hotkey, clipboard and
// xdotool output, no menu-bar item, launch at login through an XDG
// autostart entry, and no permission prompts (Linux has none for the
// microphone or synthetic input).
func New() Platform {
	return Platform{
		Hotkey:     newHotkey(),
		Trigger:    newTriggerSource(),
		ModeHotkey: newHotkey(),
		CopyHotkey: newHotkey(),
		Output:     newOutput(),
		Tray:       noTray{},
		Perms:      linuxPerms{},
		Login:      newLoginItem(),
	}
}

// Supported: on Linux only launch at login (an XDG autostart entry); there
// is no menu-bar item or Dock, and the packages put hark on PATH.
func Supported() Features { return Features{LaunchAtLogin: true} }

// noTray: Linux has no menu-bar item here (the window is the UI).
type noTray struct{}

func (noTray) Show(TrayMenu) error       { return ErrUnsupported }
func (noTray) SetRecording(bool)         {}
func (noTray) SetTranscribing(bool)      {}
func (noTray) SetRecent([]string)        {}
func (noTray) SetModes([]string, string) {}
func (noTray) Remove()                   {}

// linuxPerms: nothing to ask for; access is by group membership and the
// sound server.
type linuxPerms struct{}

func (linuxPerms) Microphone() string    { return Granted }
func (linuxPerms) Accessibility() string { return Unsupported }
func (linuxPerms) Open(which string) error {
	return ErrUnsupported
}

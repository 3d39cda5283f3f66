// Package platform is the seam between the app and the operating system:
// the global hotkey, inserting text into the focused app, the menu-bar item,
// launch at login and permissions. The interfaces live here, with the app
// that consumes them; each OS has its implementations in its own files
// (darwin ones delegate to the purego packages under macos/).
package platform

import "errors"

// ErrUnsupported is returned by features an OS does not have (no menu-bar
// item on Linux, say).
var ErrUnsupported = errors.New("not supported on this platform")

// Hotkey is a global hotkey. spec names modifiers and a key joined by "+",
// e.g. "Ctrl+Alt+Space" or "Option+Space". down runs when the key is
// pressed; up (may be nil) when it is released, for push-to-talk.
type Hotkey interface {
	Register(spec string, down, up func()) error
	Unregister() error
}

// Output modes for dictated text.
const (
	ModePaste = "paste" // clipboard + synthesized paste keystroke
	ModeCopy  = "copy"  // clipboard only
	ModeType  = "type"  // synthesized keystrokes
)

// Output inserts dictated text into the focused app.
type Output interface {
	Insert(text, mode string, restoreClipboard bool) error
}

// TrayMenu holds the actions of the menu-bar item's menu.
type TrayMenu struct {
	OnToggleDictation func()
	OnOpenWindow      func()
	OnQuit            func()
	OnRecent          func(i int)
	// OnMode picks a dictation mode by name ("" = automatic, by the
	// focused app).
	OnMode func(name string)
}

// Tray is the menu-bar status item.
type Tray interface {
	Show(m TrayMenu) error
	SetRecording(on bool)
	SetTranscribing(on bool)
	SetRecent(items []string)
	// SetModes lists the dictation modes, active ("" = automatic) checked.
	SetModes(names []string, active string)
	Remove()
}

// LoginItem starts the app at login, only when the user opts in.
type LoginItem interface {
	Enabled() (bool, error)
	SetEnabled(on bool) error
}

// Permission states.
const (
	Granted      = "granted"
	Denied       = "denied"
	Undetermined = "undetermined"
	Unsupported  = "unsupported"
)

// Permissions reports the OS permissions dictation needs.
type Permissions interface {
	Microphone() string
	Accessibility() string
	// Open shows the system settings pane for "microphone" or
	// "accessibility".
	Open(which string) error
}

// Requester is implemented by a Permissions that can show the OS's own
// prompt (macOS): Request("microphone") asks for microphone access once;
// Request("accessibility") shows the "control this computer" alert.
type Requester interface {
	Request(which string) error
}

// Flusher is implemented by an Output that defers work, such as restoring
// the clipboard after a paste; call Flush before quitting.
type Flusher interface {
	Flush() error
}

// Dock shows or hides the app's Dock icon (macOS: regular or accessory
// activation policy).
type Dock interface {
	SetVisible(on bool) error
}

// Features says which of the settings that belong to the OS work here;
// Settings shows only those (Supported, per OS, next to New).
type Features struct {
	MenuBarIcon   bool `json:"menuBarIcon"`   // a menu-bar (tray) item to show or hide
	DockIcon      bool `json:"dockIcon"`      // a Dock icon to show or hide
	LaunchAtLogin bool `json:"launchAtLogin"` // a login item Hark registers
	// InstallCommand: Hark offers to link its binary onto PATH as the
	// `hark` command (the macOS app bundle is not on PATH; Linux packages
	// install /usr/bin/hark themselves).
	InstallCommand bool `json:"installCommand"`
}

// Platform bundles one OS's implementations; New (per OS) builds it.
// Dock is nil where the OS has none.
type Platform struct {
	Hotkey  Hotkey
	Trigger TriggerSource // nil where the OS has none
	// ModeHotkey is a second global hotkey, the one that switches the
	// dictation mode (nil where the OS has none).
	ModeHotkey Hotkey
	// CopyHotkey copies the better transcript offered ("type now,
	// perfect later").
	CopyHotkey Hotkey
	Output     Output
	Tray       Tray
	Login      LoginItem
	Perms      Permissions
	Dock       Dock
}

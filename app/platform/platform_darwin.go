package platform

import (
	"fmt"

	"github.com/harkapp/hark/macos/hotkey"
	"github.com/harkapp/hark/macos/login"
	"github.com/harkapp/hark/macos/menubar"
	"github.com/harkapp/hark/macos/paste"
	"github.com/harkapp/hark/macos/permissions"
)

// New builds the macOS platform from the purego packages under macos/.
// Nothing touches AppKit until a method is called, and AppKit work is
// dispatched to the main thread, so New may run before Wails starts its
// run loop; Tray.Show and Dock.SetVisible wait for that loop, so call them
// from Wails' OnStartup (or later), not before wails.Run.
func New() Platform {
	return Platform{
		Hotkey:     &darwinHotkey{},
		Trigger:    &darwinTrigger{},
		ModeHotkey: &darwinHotkey{},
		CopyHotkey: &darwinHotkey{},
		Output:     darwinOutput{},
		Tray:       darwinTray{t: menubar.New()},
		Login:      darwinLogin{},
		Perms:      darwinPerms{},
		Dock:       darwinDock{},
	}
}

// Supported: every OS setting works on macOS.
func Supported() Features {
	return Features{MenuBarIcon: true, DockIcon: true, LaunchAtLogin: true, InstallCommand: true}
}

type darwinHotkey struct{ h hotkey.Hotkey }

func (d *darwinHotkey) Register(spec string, down, up func()) error {
	return d.h.Register(spec, down, up)
}
func (d *darwinHotkey) Unregister() error { return d.h.Unregister() }

type darwinOutput struct{}

func (darwinOutput) Insert(text, mode string, restoreClipboard bool) error {
	return paste.Insert(text, mode, restoreClipboard)
}
func (darwinOutput) Flush() error { return paste.Flush() }

type darwinTray struct{ t *menubar.Tray }

func (d darwinTray) Show(m TrayMenu) error {
	return d.t.Show(menubar.Callbacks{
		OnToggle: m.OnToggleDictation,
		OnOpen:   m.OnOpenWindow,
		OnQuit:   m.OnQuit,
		OnRecent: m.OnRecent,
		OnMode:   m.OnMode,
	})
}
func (d darwinTray) SetRecording(on bool)                   { d.t.SetRecording(on) }
func (d darwinTray) SetTranscribing(on bool)                { d.t.SetTranscribing(on) }
func (d darwinTray) SetRecent(items []string)               { d.t.SetRecent(items) }
func (d darwinTray) SetModes(names []string, active string) { d.t.SetModes(names, active) }
func (d darwinTray) Remove()                                { d.t.Remove() }

type darwinLogin struct{}

func (darwinLogin) Enabled() (bool, error)   { return login.IsEnabled() }
func (darwinLogin) SetEnabled(on bool) error { return login.SetEnabled(on) }

type darwinPerms struct{}

func (darwinPerms) Microphone() string      { return permissions.MicrophoneStatus() }
func (darwinPerms) Accessibility() string   { return permissions.AccessibilityStatus() }
func (darwinPerms) Open(which string) error { return permissions.Open(which) }

// Request shows macOS's own prompt. The microphone answer arrives later;
// the UI re-reads Microphone() (or the capture start reports it).
func (darwinPerms) Request(which string) error {
	switch which {
	case permissions.Microphone:
		return permissions.RequestMicrophone(nil)
	case permissions.Accessibility:
		_, err := permissions.PromptAccessibility()
		return err
	case permissions.InputMonitoring:
		_, err := permissions.RequestInputMonitoring()
		return err
	}
	return fmt.Errorf("platform: unknown permission %q", which)
}

type darwinDock struct{}

func (darwinDock) SetVisible(on bool) error { return menubar.SetDockIconVisible(on) }

// Compile-time checks that the adapters satisfy the seam.
var (
	_ Hotkey        = (*darwinHotkey)(nil)
	_ TriggerSource = (*darwinTrigger)(nil)
	_ Output        = darwinOutput{}
	_ Flusher       = darwinOutput{}
	_ Tray          = darwinTray{}
	_ LoginItem     = darwinLogin{}
	_ Permissions   = darwinPerms{}
	_ Requester     = darwinPerms{}
	_ Dock          = darwinDock{}
)

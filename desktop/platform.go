package desktop

import (
	"fmt"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/platform"
)

// attachPlatform connects the OS pieces to the window and the services:
// the menu-bar item (while it is shown, closing the window only hides it)
// and the global hotkey from the settings. Nil pieces are skipped, so the
// window runs where an OS has none of them.
func (s *Shell) attachPlatform(p platform.Platform) {
	s.plat = p
	if p.Hotkey != nil {
		s.pasteLast = platform.NewHotkey()
	}
	s.attachOverlay()
	if p.Tray != nil {
		err := p.Tray.Show(platform.TrayMenu{
			OnToggleDictation: func() { s.report(s.app.Dictation.Toggle()) },
			OnOpenWindow:      s.Show,
			OnQuit:            s.Quit,
			OnRecent: func(int) {
				s.Show()
				s.emit(EventView, "history")
			},
			OnMode: s.pickMode, // modes.go
		})
		s.Tray = err == nil
	}
	if st, err := s.app.Settings.Get(); err == nil {
		s.registerHotkey(st)
		s.followModes(st) // modes.go
		s.bindTrigger(st) // trigger.go
		s.applyShellSettings(st, false)
		s.armMicrophone(st)
	}
}

// armMicrophone applies the microphone settings: with "Keep the
// microphone ready" the input device opens now, so a dictation starts at
// once and keeps what was said just before the hotkey (the pre-roll);
// otherwise an idle device closes. Only when the microphone is already
// allowed: the OS prompt belongs to the user's first dictation, not to
// the app's launch.
func (s *Shell) armMicrophone(st app.SettingsData) {
	if s.rec == nil || (s.plat.Perms != nil && s.plat.Perms.Microphone() != platform.Granted) {
		return
	}
	if err := s.rec.SetMicPolicy(st.InputDevice, app.MicOptionsOf(st)); err != nil {
		s.report(fmt.Errorf("microphone: %w", err))
	}
}

// applyShellSettings follows the settings that belong to the OS: the Dock
// icon, and launch at login when login is set (on a settings change only:
// the login item is never registered, or removed, behind the user's back).
func (s *Shell) applyShellSettings(st app.SettingsData, login bool) {
	if s.plat.Dock != nil {
		s.report(s.plat.Dock.SetVisible(st.ShowDockIcon))
	}
	if login && s.plat.Login != nil {
		if on, err := s.plat.Login.Enabled(); err == nil && on != st.LaunchAtLogin {
			s.report(s.plat.Login.SetEnabled(st.LaunchAtLogin))
		}
	}
}

// registerHotkey (re)binds the global hotkey: toggle mode starts and
// stops on presses; push-to-talk records while the keys are held.
func (s *Shell) registerHotkey(st app.SettingsData) {
	hk := s.plat.Hotkey
	if hk == nil {
		return
	}
	_ = hk.Unregister()
	var down, up func()
	if st.HotkeyMode == "push" {
		down = func() { s.report(s.app.Dictation.Start()) }
		up = func() {
			_, err := s.app.Dictation.Stop()
			s.report(err)
		}
	} else {
		down = func() { s.report(s.app.Dictation.Toggle()) }
	}
	if err := hk.Register(st.Hotkey, down, up); err != nil {
		s.report(err)
	}
	if s.pasteLast == nil {
		return
	}
	_ = s.pasteLast.Unregister()
	if st.PasteLastHotkey != "" {
		err := s.pasteLast.Register(st.PasteLastHotkey, func() { s.report(s.app.Dictation.PasteLast()) }, nil)
		s.report(err)
	}
}

// observe keeps the OS pieces in step with the services' events.
func (s *Shell) observe(name string, data any) {
	s.overlayEvent(name, data)
	switch name {
	case app.EventDictationState:
		if st, ok := data.(app.DictationStatus); ok && s.plat.Tray != nil {
			s.plat.Tray.SetRecording(st.State == app.DictRecording)
			s.plat.Tray.SetTranscribing(st.State == app.DictTranscribing)
		}
	case app.EventSettingsChanged:
		if st, ok := data.(app.SettingsData); ok {
			// Not under the settings' lock: the event may be sent while
			// it is held.
			go func() {
				s.registerHotkey(st)
				s.followModes(st)
				s.bindTrigger(st)
				s.applyShellSettings(st, true)
				s.armMicrophone(st)
			}()
		}
	}
}

// detachPlatform gives the hotkey and the menu-bar item back on quit.
func (s *Shell) detachPlatform() {
	s.detachOverlay()
	// A paste's clipboard restore must not be lost to the exit.
	if f, ok := s.plat.Output.(platform.Flusher); ok {
		_ = f.Flush()
	}
	if s.pasteLast != nil {
		_ = s.pasteLast.Unregister()
	}
	if s.plat.Hotkey != nil {
		_ = s.plat.Hotkey.Unregister()
	}
	for _, hk := range []platform.Hotkey{s.plat.ModeHotkey, s.plat.CopyHotkey} {
		if hk != nil {
			_ = hk.Unregister()
		}
	}
	s.unbindTrigger()
	if s.plat.Tray != nil {
		s.plat.Tray.Remove()
	}
}

// report shows an error from a hotkey or menu action in the window.
func (s *Shell) report(err error) {
	if err != nil {
		s.emit(app.EventError, app.Problem{Error: err.Error()})
	}
}

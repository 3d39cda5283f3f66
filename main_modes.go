//go:build desktop || bindings

package main

import (
	"sync"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/platform"
)

// extraKey is one of the hotkeys besides dictation's (the mode hotkey, the
// "copy the better text" one): the spec bound now, so a settings change
// that leaves it alone does not re-grab it (a re-grab from inside its own
// callback's settings change would wait on itself).
type extraKey struct {
	mu   sync.Mutex
	spec string
}

// follow binds spec ("" = none) to action on hk, if it changed.
func (k *extraKey) follow(hk platform.Hotkey, spec string, action func() error, report func(error)) {
	if hk == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if spec == k.spec {
		return
	}
	_ = hk.Unregister()
	k.spec = ""
	if spec == "" {
		return
	}
	if err := hk.Register(spec, func() { report(action()) }, nil); err != nil {
		report(err)
		return
	}
	k.spec = spec
}

// followModes keeps the mode hotkey, the menu's Mode submenu and the
// "perfect later" keystroke in step with the settings: the mode hotkey
// switches to the next mode, the menu lists the modes with the one in
// force checked, the keystroke copies the better text offered.
func (s *Shell) followModes(st app.SettingsData) {
	if s.plat.Tray != nil {
		c := st.ModeChoice()
		s.plat.Tray.SetModes(c.Modes, c.Active)
	}
	s.modeKey.follow(s.plat.ModeHotkey, st.ModeHotkey, func() error {
		_, err := s.app.Settings.CycleMode()
		return err
	}, s.report)
	better := ""
	if st.PerfectLater {
		better = st.BetterHotkey
	}
	s.betterKey.follow(s.plat.CopyHotkey, better, func() error {
		_, err := s.app.Dictation.CopyBetter()
		return err
	}, s.report)
}

// pickMode is the menu's Mode submenu action.
func (s *Shell) pickMode(name string) {
	_, err := s.app.Settings.SetMode(name)
	s.report(err)
}

//go:build desktop || bindings

package main

import (
	"sync"

	"github.com/harkapp/hark/app"
)

// modeKey is the mode hotkey's registration: the spec bound now, so a
// settings change that leaves it alone does not re-grab it (a re-grab from
// inside its own callback's settings change would wait on itself).
type modeKey struct {
	mu   sync.Mutex
	spec string
}

// followModes keeps the mode hotkey and the menu's Mode submenu in step
// with the settings: the hotkey switches to the next mode, the menu lists
// the modes with the one in force checked.
func (s *Shell) followModes(st app.SettingsData) {
	if s.plat.Tray != nil {
		c := st.ModeChoice()
		s.plat.Tray.SetModes(c.Modes, c.Active)
	}
	hk := s.plat.ModeHotkey
	if hk == nil {
		return
	}
	s.modeKey.mu.Lock()
	defer s.modeKey.mu.Unlock()
	if st.ModeHotkey == s.modeKey.spec {
		return
	}
	_ = hk.Unregister()
	s.modeKey.spec = ""
	if st.ModeHotkey == "" {
		return
	}
	err := hk.Register(st.ModeHotkey, func() {
		_, err := s.app.Settings.CycleMode()
		s.report(err)
	}, nil)
	if err != nil {
		s.report(err)
		return
	}
	s.modeKey.spec = st.ModeHotkey
}

// pickMode is the menu's Mode submenu action.
func (s *Shell) pickMode(name string) {
	_, err := s.app.Settings.SetMode(name)
	s.report(err)
}

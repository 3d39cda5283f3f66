package desktop

import "github.com/harkapp/hark/app"

// followModes keeps the mode hotkey, the menu's Mode submenu and the
// "perfect later" keystroke in step with the settings: the mode hotkey
// switches to the next mode, the menu lists the modes with the one in
// force checked, the keystroke copies the better text offered.
func (s *Shell) followModes(st app.SettingsData) {
	if s.plat.Tray != nil {
		c := st.ModeChoice()
		s.plat.Tray.SetModes(c.Modes, c.Active)
	}
	s.modeKey.Follow(s.plat.ModeHotkey, st.ModeHotkey, func() error {
		_, err := s.app.Settings.CycleMode()
		return err
	}, s.report)
	better := ""
	if st.PerfectLater {
		better = st.BetterHotkey
	}
	s.betterKey.Follow(s.plat.CopyHotkey, better, func() error {
		_, err := s.app.Dictation.CopyBetter()
		return err
	}, s.report)
}

// pickMode is the menu's Mode submenu action.
func (s *Shell) pickMode(name string) {
	_, err := s.app.Settings.SetMode(name)
	s.report(err)
}

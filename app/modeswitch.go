package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/harkapp/hark/app/modes"
)

// A mode chosen by hand (the mode hotkey, the menu-bar menu, the Dictation
// view's picker) is sticky: it applies to every dictation, whatever app has
// the focus, until the user picks another or "Automatic" again. A choice
// that lapsed after one dictation would surprise whoever switched to
// "Email" for a few messages; the menu and the Dictation view always show
// the mode in force, so a sticky one is never hidden.

// ModeChoice is the payload of "mode:changed" and what the menu-bar menu
// shows: the modes in order and the one chosen by hand ("" = automatic).
type ModeChoice struct {
	Modes  []string `json:"modes"`
	Active string   `json:"active"`
}

// ModeChoice lists d's modes for a menu.
func (d SettingsData) ModeChoice() ModeChoice {
	c := ModeChoice{Modes: make([]string, 0, len(d.Modes)), Active: d.ActiveMode}
	for _, m := range d.Modes {
		c.Modes = append(c.Modes, m.Name)
	}
	if m, ok := modes.Find(d.Modes, d.ActiveMode); ok {
		c.Active = m.Name // as the mode spells it
	}
	return c
}

// validateModeHotkey refuses a mode hotkey that is the dictation hotkey:
// one key cannot both start dictation and switch modes.
func (d SettingsData) validateModeHotkey() error {
	if d.ModeHotkey == "" {
		return nil
	}
	if len(d.ModeHotkey) > 100 {
		return fmt.Errorf("settings: modeHotkey is too long")
	}
	if sameHotkey(d.ModeHotkey, d.Hotkey) {
		return fmt.Errorf("settings: modeHotkey %q is the dictation hotkey; pick another", d.ModeHotkey)
	}
	return nil
}

// sameHotkey compares two hotkey specs ignoring case, spaces and the
// order of the modifiers.
func sameHotkey(a, b string) bool {
	norm := func(s string) []string {
		parts := strings.Split(strings.ToLower(strings.ReplaceAll(s, " ", "")), "+")
		slices.Sort(parts)
		return parts
	}
	return slices.Equal(norm(a), norm(b))
}

// Modes lists the modes and the one chosen by hand, for a menu.
func (s *Settings) Modes() (ModeChoice, error) {
	d, err := s.Get()
	if err != nil {
		return ModeChoice{}, err
	}
	return d.ModeChoice(), nil
}

// SetMode chooses the dictation mode by hand: name is a mode's name, or ""
// (or "Automatic") for the focused app's rule. It applies from the next
// recording on and stays until changed; it emits "settings:changed" and
// "mode:changed".
func (s *Settings) SetMode(name string) (ModeChoice, error) {
	return s.switchMode(func(d SettingsData) (string, error) {
		if name == "" || strings.EqualFold(name, modes.Automatic) {
			if _, ok := modes.Find(d.Modes, name); !ok {
				return "", nil
			}
		}
		m, ok := modes.Find(d.Modes, name)
		if !ok {
			return "", fmt.Errorf("mode %q does not exist", name)
		}
		return m.Name, nil
	})
}

// CycleMode switches to the next mode by hand (the mode hotkey): the modes
// in order, then automatic, then the first again.
func (s *Settings) CycleMode() (ModeChoice, error) {
	return s.switchMode(func(d SettingsData) (string, error) { return modes.Next(d.Modes, d.ActiveMode), nil })
}

// switchMode stores the mode pick chooses, under the lock that keeps two
// quick presses of the hotkey from reading the same old mode.
func (s *Settings) switchMode(pick func(SettingsData) (string, error)) (ModeChoice, error) {
	s.switching.Lock()
	defer s.switching.Unlock()
	d, err := s.Get()
	if err != nil {
		return ModeChoice{}, err
	}
	if d.ActiveMode, err = pick(d); err != nil {
		return ModeChoice{}, err
	}
	if d, err = s.Update(d); err != nil {
		return ModeChoice{}, err
	}
	c := d.ModeChoice()
	s.deps.emit.Emit(EventModeChanged, c)
	return c, nil
}

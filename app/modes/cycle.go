package modes

import (
	"slices"
	"strings"
)

// Automatic is how menus name the absence of a mode chosen by hand: the
// focused app's rule (or the default mode) decides.
const Automatic = "Automatic"

// Next is the mode the mode hotkey switches to from active (a mode's name,
// or "" for automatic): the modes in their order, then automatic again.
// A name that no longer exists restarts the cycle at the first mode.
func Next(ms []Mode, active string) string {
	if len(ms) == 0 {
		return ""
	}
	if active == "" {
		return ms[0].Name
	}
	i := slices.IndexFunc(ms, func(m Mode) bool { return strings.EqualFold(m.Name, active) })
	switch {
	case i < 0:
		return ms[0].Name
	case i == len(ms)-1:
		return ""
	}
	return ms[i+1].Name
}

// Find returns the mode named name (case-insensitively); "" finds none.
func Find(ms []Mode, name string) (Mode, bool) {
	i := slices.IndexFunc(ms, func(m Mode) bool { return name != "" && strings.EqualFold(m.Name, name) })
	if i < 0 {
		return Mode{}, false
	}
	return ms[i], true
}

// Package trigger turns the presses and releases of one key or button,
// used alone, into dictation start/stop: push-to-talk, toggle, and a
// double tap for hands-free recording. It is platform independent: the
// OS event sources (an X11 XInput2 observer, a macOS event tap) feed it
// Inputs and it answers with Actions. A trigger key pressed together with
// any other key or button is being used as a modifier (Right Option+E
// types é) and never triggers.
package trigger

import (
	"fmt"
	"strings"
)

// Key names a key or mouse button that can trigger dictation alone.
type Key string

// Trigger keys. The right-hand modifiers are named by their PC names;
// Label gives the macOS ones (Right Option, Right Command).
const (
	RightCtrl  Key = "rightctrl"
	RightAlt   Key = "rightalt"   // macOS: Right Option; X11: Alt_R or AltGr
	RightSuper Key = "rightsuper" // macOS: Right Command
	RightShift Key = "rightshift"
	Fn         Key = "fn"     // macOS Fn/Globe
	Mouse8     Key = "mouse8" // the "back" side button (X11 button 8)
	Mouse9     Key = "mouse9" // the "forward" side button (X11 button 9)
)

// Keys lists every trigger key, in the order the settings show them.
var Keys = []Key{RightAlt, RightSuper, Fn, RightCtrl, RightShift, Mouse8, Mouse9}

// ParseKey reads a key name as stored in the settings (case and spaces
// ignored; macOS names accepted).
func ParseKey(s string) (Key, error) {
	n := strings.ToLower(strings.Join(strings.Fields(s), ""))
	switch n {
	case "rightoption", "rightopt":
		return RightAlt, nil
	case "rightcommand", "rightcmd":
		return RightSuper, nil
	case "globe", "fn/globe":
		return Fn, nil
	case "rightcontrol":
		return RightCtrl, nil
	}
	for _, k := range Keys {
		if n == string(k) {
			return k, nil
		}
	}
	return "", fmt.Errorf("trigger key %q is not one of %s", s, strings.Join(names(), ", "))
}

func names() []string {
	s := make([]string, len(Keys))
	for i, k := range Keys {
		s[i] = string(k)
	}
	return s
}

// Button reports whether k is a mouse button rather than a key.
func (k Key) Button() bool { return k == Mouse8 || k == Mouse9 }

// Label is the key's name for people, in macOS's words when mac is set.
func (k Key) Label(mac bool) string {
	switch k {
	case RightCtrl:
		return "Right Ctrl"
	case RightAlt:
		if mac {
			return "Right Option"
		}
		return "Right Alt"
	case RightSuper:
		if mac {
			return "Right Command"
		}
		return "Right Super"
	case RightShift:
		return "Right Shift"
	case Fn:
		return "Fn/Globe"
	case Mouse8:
		return "the mouse's back button"
	case Mouse9:
		return "the mouse's forward button"
	}
	return string(k)
}

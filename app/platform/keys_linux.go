package platform

import (
	"fmt"
	"strings"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// hotkeySpec is a parsed "Ctrl+Alt+Space".
type hotkeySpec struct {
	mods   uint16 // X modifier mask
	keysym xproto.Keysym
}

// modNames maps modifier names (macOS spellings too) to X masks. Alt is
// Mod1 and Super Mod4 on every common keymap.
var modNames = map[string]uint16{
	"ctrl": xproto.ModMaskControl, "control": xproto.ModMaskControl,
	"shift": xproto.ModMaskShift,
	"alt":   xproto.ModMask1, "option": xproto.ModMask1, "opt": xproto.ModMask1,
	"super": xproto.ModMask4, "cmd": xproto.ModMask4, "command": xproto.ModMask4,
	"win": xproto.ModMask4, "meta": xproto.ModMask4,
}

// keyNames maps key names to X keysyms (letters and digits are handled
// directly).
var keyNames = map[string]xproto.Keysym{
	"space": 0x20, "enter": 0xff0d, "return": 0xff0d, "tab": 0xff09, "escape": 0xff1b, "esc": 0xff1b,
	"backspace": 0xff08, "delete": 0xffff, "insert": 0xff63, "home": 0xff50, "end": 0xff57,
	"pageup": 0xff55, "pagedown": 0xff56, "left": 0xff51, "up": 0xff52, "right": 0xff53, "down": 0xff54,
	"`": 0x60, "-": 0x2d, "=": 0x3d, "[": 0x5b, "]": 0x5d, ";": 0x3b, "'": 0x27, ",": 0x2c, ".": 0x2e,
	"/": 0x2f, "\\": 0x5c, "pause": 0xff13, "scrolllock": 0xff14, "menu": 0xff67,
}

// parseHotkey parses "Mod+Mod+Key"; modifiers and names are
// case-insensitive, and exactly one non-modifier key is required.
func parseHotkey(spec string) (hotkeySpec, error) {
	var h hotkeySpec
	key := ""
	for _, p := range strings.Split(spec, "+") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			return h, fmt.Errorf("hotkey %q: empty part", spec)
		}
		if m, ok := modNames[p]; ok {
			h.mods |= m
			continue
		}
		if key != "" {
			return h, fmt.Errorf("hotkey %q: two keys (%s and %s); use modifiers plus one key", spec, key, p)
		}
		key = p
	}
	switch {
	case key == "":
		return h, fmt.Errorf("hotkey %q: no key besides the modifiers", spec)
	case len(key) == 1 && key[0] >= 'a' && key[0] <= 'z', len(key) == 1 && key[0] >= '0' && key[0] <= '9':
		h.keysym = xproto.Keysym(key[0])
	case len(key) >= 2 && len(key) <= 3 && key[0] == 'f':
		var n int
		if _, err := fmt.Sscanf(key[1:], "%d", &n); err != nil || n < 1 || n > 24 {
			return h, fmt.Errorf("hotkey %q: unknown key %q", spec, key)
		}
		h.keysym = xproto.Keysym(0xffbe + n - 1)
	default:
		ks, ok := keyNames[key]
		if !ok {
			return h, fmt.Errorf("hotkey %q: unknown key %q", spec, key)
		}
		h.keysym = ks
	}
	return h, nil
}

// keymap is the server's keycode -> keysyms table.
type keymap struct {
	min, max xproto.Keycode
	per      int
	syms     []xproto.Keysym
}

func loadKeymap(c *xgb.Conn) (*keymap, error) {
	setup := xproto.Setup(c)
	k := &keymap{min: setup.MinKeycode, max: setup.MaxKeycode}
	rep, err := xproto.GetKeyboardMapping(c, k.min, byte(k.max-k.min+1)).Reply()
	if err != nil {
		return nil, fmt.Errorf("reading the keyboard map: %w", err)
	}
	k.per, k.syms = int(rep.KeysymsPerKeycode), rep.Keysyms
	return k, nil
}

// keycode finds the first keycode producing keysym (unshifted or shifted).
func (k *keymap) keycode(ks xproto.Keysym) (xproto.Keycode, bool) {
	for col := 0; col < min(k.per, 2); col++ {
		for i := 0; i*k.per+col < len(k.syms); i++ {
			if k.syms[i*k.per+col] == ks {
				return k.min + xproto.Keycode(i), true
			}
		}
	}
	return 0, false
}

// numLockMask finds the modifier bit NumLock is on (usually Mod2).
func numLockMask(c *xgb.Conn, k *keymap) uint16 {
	kc, ok := k.keycode(0xff7f)
	if !ok {
		return 0
	}
	rep, err := xproto.GetModifierMapping(c).Reply()
	if err != nil {
		return xproto.ModMask2
	}
	per := int(rep.KeycodesPerModifier)
	for m := 0; m < 8; m++ {
		for j := 0; j < per; j++ {
			if rep.Keycodes[m*per+j] == kc {
				return 1 << m
			}
		}
	}
	return 0
}

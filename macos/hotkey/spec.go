// Package hotkey registers a system-wide hotkey on macOS through Carbon's
// RegisterEventHotKey, reporting both press and release so it serves
// push-to-talk as well as toggle. Parsing specs such as "Option+Space" into
// Carbon key codes and modifier masks is platform independent (this file).
package hotkey

import (
	"fmt"
	"strings"
)

// Carbon modifier masks (HIToolbox Events.h: cmdKey, shiftKey, optionKey,
// controlKey), as RegisterEventHotKey's inHotKeyModifiers takes them.
const (
	ModCmd     uint32 = 1 << 8
	ModShift   uint32 = 1 << 9
	ModOption  uint32 = 1 << 11
	ModControl uint32 = 1 << 12
)

// Combo is a parsed hotkey: a Carbon virtual key code (kVK_*, the physical
// key on an ANSI layout) and Carbon modifier bits.
type Combo struct {
	Key       uint32
	Modifiers uint32
	KeyName   string // canonical key name, for String
}

var modNames = map[string]uint32{
	"cmd": ModCmd, "command": ModCmd, "super": ModCmd, "meta": ModCmd, "win": ModCmd, "⌘": ModCmd,
	"shift": ModShift, "⇧": ModShift,
	"option": ModOption, "opt": ModOption, "alt": ModOption, "⌥": ModOption,
	"ctrl": ModControl, "control": ModControl, "⌃": ModControl,
}

type keyDef struct {
	code uint32
	name string
	fkey bool // function keys may stand alone without a modifier
}

// keys maps lower-case names to kVK_* codes (HIToolbox Events.h).
var keys = map[string]keyDef{}

func addKey(code uint32, name string, aliases ...string) {
	d := keyDef{code: code, name: name, fkey: len(name) > 1 && name[0] == 'F' && name[1] >= '0' && name[1] <= '9'}
	keys[strings.ToLower(name)] = d
	for _, a := range aliases {
		keys[strings.ToLower(a)] = d
	}
}

func init() {
	letters := map[byte]uint32{
		'A': 0x00, 'S': 0x01, 'D': 0x02, 'F': 0x03, 'H': 0x04, 'G': 0x05, 'Z': 0x06, 'X': 0x07,
		'C': 0x08, 'V': 0x09, 'B': 0x0B, 'Q': 0x0C, 'W': 0x0D, 'E': 0x0E, 'R': 0x0F, 'Y': 0x10,
		'T': 0x11, 'O': 0x1F, 'U': 0x20, 'I': 0x22, 'P': 0x23, 'L': 0x25, 'J': 0x26, 'K': 0x28,
		'N': 0x2D, 'M': 0x2E,
	}
	for c, code := range letters {
		addKey(code, string(c))
	}
	digits := []uint32{0x1D, 0x12, 0x13, 0x14, 0x15, 0x17, 0x16, 0x1A, 0x1C, 0x19} // 0..9
	for d, code := range digits {
		addKey(code, string(rune('0'+d)))
	}
	fkeys := []uint32{0x7A, 0x78, 0x63, 0x76, 0x60, 0x61, 0x62, 0x64, 0x65, 0x6D, // F1..F10
		0x67, 0x6F, 0x69, 0x6B, 0x71, 0x6A, 0x40, 0x4F, 0x50, 0x5A} // F11..F20
	for i, code := range fkeys {
		addKey(code, fmt.Sprintf("F%d", i+1))
	}
	addKey(0x31, "Space")
	addKey(0x24, "Return", "Enter")
	addKey(0x30, "Tab")
	addKey(0x35, "Escape", "Esc")
	addKey(0x33, "Delete", "Backspace")
	addKey(0x75, "ForwardDelete", "Del")
	addKey(0x73, "Home")
	addKey(0x77, "End")
	addKey(0x74, "PageUp", "PgUp")
	addKey(0x79, "PageDown", "PgDn")
	addKey(0x7B, "Left", "LeftArrow", "←")
	addKey(0x7C, "Right", "RightArrow", "→")
	addKey(0x7D, "Down", "DownArrow", "↓")
	addKey(0x7E, "Up", "UpArrow", "↑")
	addKey(0x1B, "-", "Minus")
	addKey(0x18, "=", "Equal", "Equals")
	addKey(0x21, "[", "LeftBracket")
	addKey(0x1E, "]", "RightBracket")
	addKey(0x29, ";", "Semicolon")
	addKey(0x27, "'", "Quote", "Apostrophe")
	addKey(0x2B, ",", "Comma")
	addKey(0x2F, ".", "Period", "Dot")
	addKey(0x2C, "/", "Slash")
	addKey(0x2A, `\`, "Backslash")
	addKey(0x32, "`", "Grave", "Backquote", "Backtick")
}

// Parse reads a spec such as "Option+Space", "Cmd+Shift+D" or "⌃⌥Space":
// modifiers and one key joined by "+", case-insensitive. A hotkey needs at
// least one of Cmd, Option or Control (Shift alone would swallow capital
// letters), except for function keys, which may stand alone.
func Parse(spec string) (Combo, error) {
	var toks []string
	for _, part := range strings.Split(spec, "+") {
		// Symbols may be written without separators: "⌘⇧D".
		for {
			part = strings.TrimSpace(part)
			sym := ""
			for _, s := range []string{"⌘", "⇧", "⌥", "⌃"} {
				if strings.HasPrefix(part, s) && len(part) > len(s) {
					sym = s
					break
				}
			}
			if sym == "" {
				break
			}
			toks = append(toks, sym)
			part = part[len(sym):]
		}
		toks = append(toks, part)
	}
	if len(toks) == 0 || strings.TrimSpace(spec) == "" {
		return Combo{}, fmt.Errorf("hotkey: empty spec")
	}
	var c Combo
	for i, tok := range toks {
		low := strings.ToLower(tok)
		if tok == "" {
			return Combo{}, fmt.Errorf("hotkey %q: empty part", spec)
		}
		last := i == len(toks)-1
		if m, ok := modNames[low]; ok {
			if last {
				return Combo{}, fmt.Errorf("hotkey %q: no key after the modifiers", spec)
			}
			if c.Modifiers&m != 0 {
				return Combo{}, fmt.Errorf("hotkey %q: modifier %s given twice", spec, tok)
			}
			c.Modifiers |= m
			continue
		}
		if !last {
			return Combo{}, fmt.Errorf("hotkey %q: %q is not a modifier (Cmd, Option, Control, Shift)", spec, tok)
		}
		k, ok := keys[low]
		if !ok {
			return Combo{}, fmt.Errorf("hotkey %q: unknown key %q", spec, tok)
		}
		c.Key, c.KeyName = k.code, k.name
		if !k.fkey && c.Modifiers&(ModCmd|ModOption|ModControl) == 0 {
			return Combo{}, fmt.Errorf("hotkey %q: needs Cmd, Option or Control (only function keys may stand alone)", spec)
		}
	}
	return c, nil
}

// String writes the combo in macOS menu order: Control, Option, Shift,
// Command, then the key. Parse(c.String()) gives c back.
func (c Combo) String() string {
	var parts []string
	for _, m := range []struct {
		bit  uint32
		name string
	}{{ModControl, "Ctrl"}, {ModOption, "Option"}, {ModShift, "Shift"}, {ModCmd, "Cmd"}} {
		if c.Modifiers&m.bit != 0 {
			parts = append(parts, m.name)
		}
	}
	return strings.Join(append(parts, c.KeyName), "+")
}

// OptionOnly reports whether the only modifiers are Option or Option+Shift.
// macOS 15.0 and 15.1 refuse such registrations (Apple's anti-keylogging
// change, relaxed again in 15.2), so Register names this in its error.
func (c Combo) OptionOnly() bool {
	return c.Modifiers&ModOption != 0 && c.Modifiers&^(ModOption|ModShift) == 0
}

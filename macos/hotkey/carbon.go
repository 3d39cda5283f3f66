package hotkey

import "fmt"

// Carbon Event Manager constants (HIToolbox CarbonEvents.h / Events.h).
// Four-character codes are big-endian packed ASCII. Those only the event
// handler uses are in hotkey_darwin.go.
var (
	eventClassKeyboard   = fourCC("keyb") // kEventClassKeyboard
	paramDirectObject    = fourCC("----") // kEventParamDirectObject
	typeEventHotKeyID    = fourCC("hkid") // typeEventHotKeyID
	eventInternalErr     = int32(-9868)   // what macOS 15.0/15.1 return for Option-only hotkeys
	eventHotKeyExistsErr = int32(-9878)   // another app (or we) already own this combo
)

func fourCC(s string) uint32 {
	if len(s) != 4 {
		panic("fourCC needs 4 bytes: " + s)
	}
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

// registerError explains a failed RegisterEventHotKey.
func registerError(c Combo, st int32) error {
	switch {
	case st == eventHotKeyExistsErr:
		return fmt.Errorf("hotkey %s is already taken by another app", c)
	case st == eventInternalErr && c.OptionOnly():
		return fmt.Errorf("hotkey %s refused by macOS (OSStatus %d): macOS 15.0 and 15.1 do not allow Option or Option+Shift alone; add Control or Command, or update macOS", c, st)
	}
	return fmt.Errorf("hotkey %s: RegisterEventHotKey failed (OSStatus %d)", c, st)
}

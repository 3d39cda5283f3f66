// Package eventtap watches one key or mouse button used alone on macOS
// (Right Option, Right Command, Fn/Globe, a mouse side button) through a
// listen-only Quartz event tap (CGEventTapCreate): it sees the events but
// never takes them, so the key keeps working in every app. A listen-only
// tap needs the Input Monitoring permission (macos/permissions).
//
// Modifiers alone produce no key down or up, only flagsChanged events
// whose flags hold the state of every modifier, each side its own device
// bit; Decode (this file, platform independent) turns them into presses
// and releases. The tap itself is eventtap_darwin.go.
package eventtap

// Quartz event types (CGEventTypes.h) the tap listens to.
const (
	TypeLeftMouseDown  = 1
	TypeRightMouseDown = 3
	TypeKeyDown        = 10
	TypeKeyUp          = 11
	TypeFlagsChanged   = 12
	TypeScrollWheel    = 22
	TypeOtherMouseDown = 25
	TypeOtherMouseUp   = 26
	// The tap was switched off because a callback was slow, or by secure
	// input; it is switched back on.
	TypeTapDisabledByTimeout   = 0xFFFFFFFE
	TypeTapDisabledByUserInput = 0xFFFFFFFF
)

// Event is what Decode needs of a Quartz event.
type Event struct {
	Type    uint32
	Keycode int64  // kCGKeyboardEventKeycode
	Flags   uint64 // CGEventGetFlags
	Button  int64  // kCGMouseEventButtonNumber (0 left, 1 right, 2 middle, 3 and 4 the side buttons)
	Repeat  bool   // kCGKeyboardEventAutorepeat
}

// Key is a watchable key or button: a modifier by its virtual keycode
// (HIToolbox kVK_*) and the flag bit that is set while it is down, or a
// mouse button.
type Key struct {
	Keycode int64
	Flag    uint64
	Button  int64 // ≥ 0 for a mouse button; then Keycode and Flag are unused
}

// Device-dependent modifier bits (IOKit IOLLEvent.h NX_DEVICE*KEYMASK)
// tell the right-hand modifiers from the left; Fn has its own flag
// (kCGEventFlagMaskSecondaryFn).
const (
	flagRightShift = 0x4
	flagRightCmd   = 0x10
	flagRightAlt   = 0x40
	flagRightCtrl  = 0x2000
	flagFn         = 0x800000
)

// The keys a trigger may use.
var (
	RightOption  = Key{Keycode: 0x3D, Flag: flagRightAlt, Button: -1}  // kVK_RightOption
	RightCommand = Key{Keycode: 0x36, Flag: flagRightCmd, Button: -1}  // kVK_RightCommand
	RightControl = Key{Keycode: 0x3E, Flag: flagRightCtrl, Button: -1} // kVK_RightControl
	RightShift   = Key{Keycode: 0x3C, Flag: flagRightShift, Button: -1}
	Fn           = Key{Keycode: 0x3F, Flag: flagFn, Button: -1} // kVK_Function (Fn/Globe)
	MouseBack    = Key{Button: 3}                               // the side buttons, as X11's 8 and 9
	MouseForward = Key{Button: 4}
)

// Result is Decode's answer.
type Result int

// Results.
const (
	Ignore    Result = iota // nothing the trigger needs (a release of another key, a repeat)
	KeyDown                 // the watched key went down
	KeyUp                   // the watched key went up
	OtherDown               // another key or button went down: the watched one is a modifier now
)

// Decode tells what e means for a trigger watching k.
func Decode(k Key, e Event) Result {
	switch e.Type {
	case TypeFlagsChanged:
		if k.Button >= 0 || e.Keycode != k.Keycode {
			// Another modifier changed. Only its press matters, and a
			// flagsChanged does not say which way it went; a modifier
			// joining the watched one is a chord either way.
			return OtherDown
		}
		if e.Flags&k.Flag != 0 {
			return KeyDown
		}
		return KeyUp
	case TypeKeyDown:
		if e.Repeat {
			return Ignore
		}
		return OtherDown
	case TypeLeftMouseDown, TypeRightMouseDown, TypeScrollWheel:
		return OtherDown
	case TypeOtherMouseDown, TypeOtherMouseUp:
		if k.Button >= 0 && e.Button == k.Button {
			if e.Type == TypeOtherMouseDown {
				return KeyDown
			}
			return KeyUp
		}
		if e.Type == TypeOtherMouseDown {
			return OtherDown
		}
	}
	return Ignore
}

// Mask is the tap's event mask: keys, modifiers, clicks and the scroll
// wheel (Option+scroll and Command+click are chords too).
func Mask() uint64 {
	var m uint64
	for _, t := range []uint32{TypeLeftMouseDown, TypeRightMouseDown, TypeKeyDown, TypeFlagsChanged,
		TypeScrollWheel, TypeOtherMouseDown, TypeOtherMouseUp} {
		m |= 1 << t
	}
	return m
}

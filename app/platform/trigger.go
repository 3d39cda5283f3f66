package platform

import (
	"errors"

	"github.com/harkapp/hark/app/trigger"
)

// TriggerSource watches one key or mouse button used alone (Right Option,
// Fn, a mouse side button) without taking it from other apps, so the
// modifier keeps working everywhere else. It reports the key's presses
// and releases, and the presses of every other key and button as key "",
// to feed (on its own goroutine; feed must not block); the trigger
// machine (app/trigger) decides what they mean.
type TriggerSource interface {
	// Watch starts watching key, replacing an earlier Watch. It fails
	// when the OS cannot observe the key (Fn on X11), when the app lacks
	// the permission to (macOS Input Monitoring), or when another app
	// holds the key as its own hotkey.
	Watch(key trigger.Key, feed func(key trigger.Key, down bool)) error
	// Close stops watching; feed is not called after it returns.
	Close() error
}

// Errors Watch wraps.
var (
	// ErrTriggerTaken: another app holds the key alone as its hotkey.
	ErrTriggerTaken = errors.New("already taken by another application")
	// ErrTriggerPermission: the OS asked the user for the permission to
	// watch input, and it is not granted (yet).
	ErrTriggerPermission = errors.New("permission to watch the keyboard is not granted")
)

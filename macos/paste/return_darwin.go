package paste

import (
	"fmt"
	"time"

	"github.com/harkapp/hark/macos/permissions"
)

// keyReturn is kVK_Return.
const keyReturn = 0x24

// PressReturn sends Return down and up to the focused app (a dictation
// mode's auto-Enter: send the chat message, run the command).
func PressReturn() error {
	if err := load(); err != nil {
		return err
	}
	if permissions.AccessibilityStatus() != permissions.Granted {
		return ErrNotTrusted
	}
	src := cgEventSourceCreate(stateHIDSystem)
	if src != 0 {
		defer cfRelease(src)
	}
	for _, down := range []bool{true, false} {
		ev := cgEventCreateKeyboardEvent(src, keyReturn, down)
		if ev == 0 {
			return fmt.Errorf("paste: CGEventCreateKeyboardEvent failed")
		}
		cgEventPost(hidEventTap, ev)
		cfRelease(ev)
		time.Sleep(keystrokeSpacing)
	}
	return nil
}

package textfield

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/harkapp/hark/internal/ns"
)

// caretTimeout caps each Accessibility call to the focused app: one that
// hangs must not hold the recording overlay back (app/overlay waits for
// the caret before it shows).
const caretTimeout = 0.25

// Caret is where the focused text field's cursor is on the screen: its
// left edge x, top y and height, in Accessibility's coordinates (points,
// the origin at the top left of the primary screen, y down; Cocoa's
// windows are placed y up, macos/panel flips them). The cursor is the
// start of AXSelectedTextRange; its box is AXBoundsForRange of the empty
// range there, or of the character before it (its right edge), as apps
// answer one or the other. It needs the Accessibility permission.
func Caret() (x, y, h float64, err error) {
	if err := load(); err != nil {
		return 0, 0, 0, err
	}
	ns.WithPool(func() { x, y, h, err = caret() })
	return x, y, h, err
}

// caret runs inside an autorelease pool (the attribute names).
func caret() (x, y, h float64, err error) {
	sys := axSystemWide()
	if sys == 0 {
		return 0, 0, 0, errors.New("textfield: no system-wide accessibility element")
	}
	defer cfRelease(sys)
	var el uintptr
	if st := axCopyAttr(sys, ns.String("AXFocusedUIElement"), &el); st != axSuccess || el == 0 {
		return 0, 0, 0, fmt.Errorf("textfield: nothing focused, or Accessibility not allowed (AXError %d)", st)
	}
	defer cfRelease(el)
	axSetTimeout(el, caretTimeout)
	var rv uintptr
	if st := axCopyAttr(el, ns.String("AXSelectedTextRange"), &rv); st != axSuccess || rv == 0 {
		return 0, 0, 0, fmt.Errorf("textfield: the focused element has no text cursor (AXError %d)", st)
	}
	var sel cfRange
	ok := axValueGetValue(rv, axValueCFRange, unsafe.Pointer(&sel))
	cfRelease(rv)
	if !ok {
		return 0, 0, 0, errors.New("textfield: the focused element's selection is not a range")
	}
	if b, ok := boundsFor(el, cfRange{Location: sel.Location}); ok {
		return b.X, b.Y, b.Height, nil
	}
	if sel.Location > 0 {
		if b, ok := boundsFor(el, cfRange{Location: sel.Location - 1, Length: 1}); ok {
			return b.X + b.Width, b.Y, b.Height, nil
		}
	}
	return 0, 0, 0, errors.New("textfield: the focused element does not say where its text cursor is")
}

// boundsFor is AXBoundsForRange of r in el, when el gives a box with a
// height (some apps answer an empty range with a zero box).
func boundsFor(el uintptr, r cfRange) (cgRect, bool) {
	param := axValueCreate(axValueCFRange, unsafe.Pointer(&r))
	if param == 0 {
		return cgRect{}, false
	}
	defer cfRelease(param)
	var out uintptr
	if st := axCopyParamAttr(el, ns.String("AXBoundsForRange"), param, &out); st != axSuccess || out == 0 {
		return cgRect{}, false
	}
	defer cfRelease(out)
	var b cgRect
	if !axValueGetValue(out, axValueCGRect, unsafe.Pointer(&b)) || b.Height <= 0 {
		return cgRect{}, false
	}
	return b, true
}

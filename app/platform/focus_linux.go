package platform

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// NewFocus reports the active X11 window's WM_CLASS class (the EWMH
// _NET_ACTIVE_WINDOW of the root window), over the X protocol. Under
// Wayland only XWayland windows can be seen.
func NewFocus() Focus { return x11Focus{} }

type x11Focus struct{}

func (x11Focus) FocusedApp() (string, error) {
	if os.Getenv("DISPLAY") == "" {
		return "", ErrNoDisplay
	}
	c, err := xgb.NewConn()
	if err != nil {
		return "", fmt.Errorf("focus: %w", err)
	}
	defer c.Close()
	root := xproto.Setup(c).DefaultScreen(c).Root
	atom := func(name string) (xproto.Atom, error) {
		r, err := xproto.InternAtom(c, true, uint16(len(name)), name).Reply()
		if err != nil {
			return 0, err
		}
		return r.Atom, nil
	}
	active, err := atom("_NET_ACTIVE_WINDOW")
	if err != nil || active == 0 {
		return "", errors.New("focus: the window manager does not publish the active window")
	}
	p, err := xproto.GetProperty(c, false, root, active, xproto.AtomWindow, 0, 1).Reply()
	if err != nil {
		return "", fmt.Errorf("focus: %w", err)
	}
	if p.ValueLen == 0 || len(p.Value) < 4 {
		return "", errors.New("focus: no active window")
	}
	win := xproto.Window(xgb.Get32(p.Value))
	cls, err := xproto.GetProperty(c, false, win, xproto.AtomWmClass, xproto.AtomString, 0, 256).Reply()
	if err != nil {
		return "", fmt.Errorf("focus: %w", err)
	}
	return wmClass(cls.Value)
}

// wmClass picks the class (the second string) of a WM_CLASS value,
// "instance\x00Class\x00"; the instance when there is no class.
func wmClass(v []byte) (string, error) {
	parts := bytes.Split(bytes.TrimRight(v, "\x00"), []byte{0})
	for i := len(parts) - 1; i >= 0; i-- {
		if len(parts[i]) > 0 {
			return string(parts[i]), nil
		}
	}
	return "", errors.New("focus: the active window has no WM_CLASS")
}

// PressReturn sends Return through xdotool.
func (o *linuxOutput) PressReturn() error {
	return xdotool("key", "--clearmodifiers", "Return")
}

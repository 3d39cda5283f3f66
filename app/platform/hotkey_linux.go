package platform

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// x11Hotkey grabs a key combination on the X root window (pure Go, over
// the X protocol). It needs an X server: an X11 session, or XWayland
// where a Wayland compositor lets clients grab keys (most do not; there
// the user binds a desktop shortcut to the app instead).
type x11Hotkey struct {
	mu    sync.Mutex
	conn  *xgb.Conn
	done  chan struct{}
	grabs []uint16
	kc    xproto.Keycode
	root  xproto.Window
}

func newHotkey() *x11Hotkey { return &x11Hotkey{} }

func init() {
	// xgb logs every connection made without an Xauthority file (normal
	// under Xvfb and many sessions) and its own read errors to stderr;
	// our errors are returned instead.
	xgb.Logger = log.New(io.Discard, "", 0)
}

// ErrNoDisplay is returned when there is no X server to grab keys on.
var ErrNoDisplay = errors.New("global hotkey: no X11 display (DISPLAY is not set); on Wayland, bind a desktop shortcut to the app instead")

// repeatWindow is how long a key release waits for the key press that
// follows it when the key auto-repeats: X reports a held key as
// release+press pairs with one timestamp, sent back to back.
const repeatWindow = 25 * time.Millisecond

// Register grabs spec; down runs on press and up (if not nil) on release,
// on the hotkey's own goroutine (keep them short). A second Register
// replaces the first.
func (h *x11Hotkey) Register(spec string, down, up func()) error {
	hs, err := parseHotkey(spec)
	if err != nil {
		return err
	}
	if down == nil {
		return errors.New("global hotkey: down callback is required")
	}
	if err := h.Unregister(); err != nil {
		return err
	}
	if os.Getenv("DISPLAY") == "" {
		return ErrNoDisplay
	}
	c, err := xgb.NewConn()
	if err != nil {
		return fmt.Errorf("global hotkey: connecting to X display %q: %w", os.Getenv("DISPLAY"), err)
	}
	km, err := loadKeymap(c)
	if err != nil {
		c.Close()
		return fmt.Errorf("global hotkey: %w", err)
	}
	kc, ok := km.keycode(hs.keysym)
	if !ok {
		c.Close()
		return fmt.Errorf("global hotkey %q: the keyboard has no such key", spec)
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	// Grab every lock-state variant: with CapsLock or NumLock on, the
	// server reports those modifiers too, and an exact grab would miss.
	num := numLockMask(c, km)
	var grabs []uint16
	for _, extra := range []uint16{0, xproto.ModMaskLock, num, num | xproto.ModMaskLock} {
		m := hs.mods | extra
		if slicesContains(grabs, m) {
			continue
		}
		err := xproto.GrabKeyChecked(c, true, root, m, kc, xproto.GrabModeAsync, xproto.GrabModeAsync).Check()
		if err != nil {
			for _, g := range grabs {
				xproto.UngrabKey(c, kc, root, g)
			}
			c.Close()
			var acc xproto.AccessError
			if errors.As(err, &acc) {
				return fmt.Errorf("global hotkey %q is already taken by another application", spec)
			}
			return fmt.Errorf("global hotkey %q: %w", spec, err)
		}
		grabs = append(grabs, m)
	}
	h.mu.Lock()
	h.conn, h.grabs, h.kc, h.root, h.done = c, grabs, kc, root, make(chan struct{})
	done := h.done
	h.mu.Unlock()
	go h.loop(c, kc, down, up, done)
	return nil
}

func slicesContains(s []uint16, v uint16) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// loop turns key events into callbacks, filtering auto-repeat.
func (h *x11Hotkey) loop(c *xgb.Conn, kc xproto.Keycode, down, up func(), done chan struct{}) {
	defer close(done)
	events := make(chan xgb.Event, 16)
	go func() {
		defer close(events)
		for {
			ev, err := c.WaitForEvent()
			if ev == nil && err == nil {
				return // connection closed
			}
			if ev != nil {
				events <- ev
			}
		}
	}()
	held := func() bool {
		r, err := xproto.QueryKeymap(c).Reply()
		return err == nil && keyDown(r.Keys, kc)
	}
	filterRepeat(events, kc, down, up, held)
}

// keyDown reads keycode kc's bit in a QueryKeymap bit vector.
func keyDown(keys []byte, kc xproto.Keycode) bool {
	i := int(kc) / 8
	return i < len(keys) && keys[i]&(1<<(kc%8)) != 0
}

// filterRepeat calls down on the key's press and up on its release, and
// drops the release+press pairs of auto-repeat. A release waits
// repeatWindow for its twin press; when the window passes first (the
// process was not scheduled in time, as on a loaded machine), held asks
// the server whether the key is still down before calling it released,
// so a held key is never reported up by a late event.
func filterRepeat(events <-chan xgb.Event, kc xproto.Keycode, down, up func(), held func() bool) {
	pressed := false
	var pending *time.Timer
	var pendingTime xproto.Timestamp
	var fire <-chan time.Time
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				if pending != nil {
					pending.Stop()
				}
				return
			}
			switch e := ev.(type) {
			case xproto.KeyPressEvent:
				if e.Detail != kc {
					continue
				}
				if fire != nil && e.Time == pendingTime {
					pending.Stop() // auto-repeat: the key never went up
					fire = nil
					continue
				}
				if pressed {
					continue
				}
				pressed = true
				down()
			case xproto.KeyReleaseEvent:
				if e.Detail != kc || !pressed {
					continue
				}
				pendingTime = e.Time
				pending = time.NewTimer(repeatWindow)
				fire = pending.C
			}
		case <-fire:
			fire = nil
			if held() {
				continue // the repeat's press is on its way: still pressed
			}
			pressed = false
			if up != nil {
				up()
			}
		}
	}
}

// Unregister releases the grab; callbacks stop before it returns.
func (h *x11Hotkey) Unregister() error {
	h.mu.Lock()
	c, done, grabs, kc, root := h.conn, h.done, h.grabs, h.kc, h.root
	h.conn, h.done, h.grabs = nil, nil, nil
	h.mu.Unlock()
	if c == nil {
		return nil
	}
	for _, g := range grabs {
		xproto.UngrabKey(c, kc, root, g)
	}
	_, _ = xproto.GetInputFocus(c).Reply() // round trip: the ungrabs are done
	c.Close()
	<-done
	return nil
}

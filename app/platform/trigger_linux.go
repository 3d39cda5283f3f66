package platform

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/harkapp/hark/app/trigger"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// x11Trigger observes XInput2 raw events on the root window. Raw events
// reach every client that selects them, whatever grabs are active, and
// selecting them takes nothing from other clients: Right Ctrl still
// works as Ctrl in every app, and the side button still goes back in the
// browser.
type x11Trigger struct {
	mu   sync.Mutex
	conn *xgb.Conn
	done chan struct{}
	stop chan struct{}
}

func newTriggerSource() *x11Trigger { return &x11Trigger{} }

// XInput2 (XI2proto.h): requests, event types, the device that stands
// for all master devices, and the raw event flag for auto-repeat.
const (
	xiSelectEvents      = 46
	xiQueryVersion      = 47
	xiRawKeyPress       = 13
	xiRawKeyRelease     = 14
	xiRawButtonPress    = 15
	xiRawButtonRelease  = 16
	xiAllMasterDevices  = 1
	xiKeyRepeat         = 1 << 16
	xiRequestTimeout    = 5 * time.Second
	xiRawEventHeaderLen = 32
)

// triggerKeysyms are the keysyms a trigger key produces unshifted. Every
// keycode with one of them counts: AltGr layouts put ISO_Level3_Shift
// on the Right Alt key (108) and on a virtual key (92) that never fires.
var triggerKeysyms = map[trigger.Key][]xproto.Keysym{
	trigger.RightCtrl:  {0xffe4},         // Control_R
	trigger.RightAlt:   {0xffea, 0xfe03}, // Alt_R, else ISO_Level3_Shift (AltGr)
	trigger.RightSuper: {0xffec},         // Super_R
	trigger.RightShift: {0xffe2},         // Shift_R
}

// triggerButtons maps the mouse trigger keys to X buttons.
var triggerButtons = map[trigger.Key]byte{trigger.Mouse8: 8, trigger.Mouse9: 9}

// Watch implements TriggerSource.
func (x *x11Trigger) Watch(key trigger.Key, feed func(trigger.Key, bool)) error {
	if feed == nil {
		return errors.New("trigger: nil feed")
	}
	if err := x.Close(); err != nil {
		return err
	}
	_, isKey := triggerKeysyms[key]
	button, isButton := triggerButtons[key]
	if !isKey && !isButton {
		return fmt.Errorf("trigger key %q cannot be watched on X11 (Fn never reaches the X server); choose Right Ctrl, Right Alt, Right Super, Right Shift or a mouse side button", key)
	}
	raw, num, err := dialX(os.Getenv("DISPLAY"))
	if err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	// The events arrive on xgb's reader goroutine; stop gates them so
	// that none is fed after Close.
	stop := make(chan struct{})
	var kcs []xproto.Keycode
	var xiOpcode byte
	var ready sync.WaitGroup // kcs and the opcode are set before events flow
	ready.Add(1)
	setReady := sync.OnceFunc(ready.Done)
	g := &geConn{Conn: raw, auth: readXauth(num), onGeneric: func(ev []byte) {
		ready.Wait()
		select {
		case <-stop:
			return
		default:
		}
		if k, down, ok := decodeRawEvent(ev, xiOpcode, kcs, button, key); ok {
			feed(k, down)
		}
	}}
	c, err := xgb.NewConnNet(g)
	if err != nil {
		setReady()
		raw.Close()
		return fmt.Errorf("trigger: connecting to X display %q: %w", os.Getenv("DISPLAY"), err)
	}
	fail := func(err error) error {
		setReady()
		close(stop)
		c.Close()
		return fmt.Errorf("trigger: %w", err)
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	if isKey {
		km, err := loadKeymap(c)
		if err != nil {
			return fail(err)
		}
		kcs = km.keycodes(triggerKeysyms[key])
		if len(kcs) == 0 {
			return fail(fmt.Errorf("the keyboard map has no %s key", key.Label(false)))
		}
	}
	if err := checkFree(c, root, key, kcs, button); err != nil {
		return fail(err)
	}
	ext, err := xproto.QueryExtension(c, uint16(len("XInputExtension")), "XInputExtension").Reply()
	if err != nil {
		return fail(err)
	}
	if !ext.Present {
		return fail(errors.New("the X server has no XInput extension"))
	}
	xiOpcode = ext.MajorOpcode
	setReady() // before selecting: events may come before the reply
	if err := xiInit(c, xiOpcode, root); err != nil {
		return fail(err)
	}
	done := make(chan struct{})
	go func() { // drain xgb's queue (core events, async errors)
		defer close(done)
		for {
			if ev, err := c.WaitForEvent(); ev == nil && err == nil {
				return
			}
		}
	}()
	x.mu.Lock()
	x.conn, x.done, x.stop = c, done, stop
	x.mu.Unlock()
	return nil
}

// checkFree tries to grab the key or button alone on the root window and
// lets go at once: BadAccess means another client holds it as a hotkey,
// and both would act on it.
func checkFree(c *xgb.Conn, root xproto.Window, key trigger.Key, kcs []xproto.Keycode, button byte) error {
	var err error
	if button != 0 {
		err = xproto.GrabButtonChecked(c, false, root, xproto.EventMaskButtonPress, xproto.GrabModeAsync,
			xproto.GrabModeAsync, 0, 0, button, 0).Check()
		if err == nil {
			xproto.UngrabButton(c, button, root, 0)
		}
	}
	for _, kc := range kcs {
		if err != nil {
			break
		}
		err = xproto.GrabKeyChecked(c, false, root, 0, kc, xproto.GrabModeAsync, xproto.GrabModeAsync).Check()
		if err == nil {
			xproto.UngrabKey(c, kc, root, 0)
		}
	}
	var acc xproto.AccessError
	if errors.As(err, &acc) {
		return fmt.Errorf("%s is %w", key.Label(false), ErrTriggerTaken)
	}
	return err
}

// xiInit announces XInput 2.2 (the server sends XI2 events only to
// clients that have) and selects raw key and button events from all
// master devices on the root window.
func xiInit(c *xgb.Conn, opcode byte, root xproto.Window) error {
	q := make([]byte, 8)
	q[0], q[1] = opcode, xiQueryVersion
	binary.LittleEndian.PutUint16(q[2:], 2) // length in words
	binary.LittleEndian.PutUint16(q[4:], 2) // major
	binary.LittleEndian.PutUint16(q[6:], 2) // minor
	cookie := c.NewCookie(true, true)
	c.NewRequest(q, cookie)
	rep, err := withTimeout(cookie.Reply)
	if err != nil {
		return fmt.Errorf("XIQueryVersion: %w", err)
	}
	if len(rep) < 12 || binary.LittleEndian.Uint16(rep[8:]) < 2 {
		return errors.New("the X server has no XInput 2")
	}
	const mask = 1<<xiRawKeyPress | 1<<xiRawKeyRelease | 1<<xiRawButtonPress | 1<<xiRawButtonRelease
	s := make([]byte, 20)
	s[0], s[1] = opcode, xiSelectEvents
	binary.LittleEndian.PutUint16(s[2:], 5) // length in words
	binary.LittleEndian.PutUint32(s[4:], uint32(root))
	binary.LittleEndian.PutUint16(s[8:], 1) // one mask
	binary.LittleEndian.PutUint16(s[12:], xiAllMasterDevices)
	binary.LittleEndian.PutUint16(s[14:], 1) // mask length in words
	binary.LittleEndian.PutUint32(s[16:], mask)
	sel := c.NewCookie(true, false)
	c.NewRequest(s, sel)
	if _, err := withTimeout(func() ([]byte, error) { return nil, sel.Check() }); err != nil {
		return fmt.Errorf("XISelectEvents: %w", err)
	}
	return nil
}

// withTimeout bounds a round trip: xgb drops extension errors it has no
// constructor for, and their cookie would wait for ever.
func withTimeout(f func() ([]byte, error)) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() { b, err := f(); ch <- result{b, err} }()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-time.After(xiRequestTimeout):
		return nil, errors.New("no answer from the X server")
	}
}

// decodeRawEvent turns an XI2 raw event into a trigger input: the trigger
// key or button (one of kcs, or button), or "" for any other key or
// button press.
// ok is false for events that do not matter (other releases, other
// extensions' events, auto-repeat).
func decodeRawEvent(ev []byte, opcode byte, kcs []xproto.Keycode, button byte, key trigger.Key) (trigger.Key, bool, bool) {
	if len(ev) < xiRawEventHeaderLen || ev[1] != opcode {
		return "", false, false
	}
	typ := binary.LittleEndian.Uint16(ev[8:])
	detail := binary.LittleEndian.Uint32(ev[16:])
	flags := binary.LittleEndian.Uint32(ev[24:])
	switch typ {
	case xiRawKeyPress, xiRawKeyRelease:
		down := typ == xiRawKeyPress
		if slices.Contains(kcs, xproto.Keycode(detail)) {
			if down && flags&xiKeyRepeat != 0 {
				return "", false, false
			}
			return key, down, true
		}
		return "", true, down
	case xiRawButtonPress, xiRawButtonRelease:
		down := typ == xiRawButtonPress
		if button != 0 && detail == uint32(button) {
			return key, down, true
		}
		return "", true, down
	}
	return "", false, false
}

// Close implements TriggerSource.
func (x *x11Trigger) Close() error {
	x.mu.Lock()
	c, done, stop := x.conn, x.done, x.stop
	x.conn, x.done, x.stop = nil, nil, nil
	x.mu.Unlock()
	if c == nil {
		return nil
	}
	close(stop)
	c.Close()
	<-done
	return nil
}

var _ TriggerSource = (*x11Trigger)(nil)

// keycodes lists every keycode whose unshifted keysym is one of syms.
func (k *keymap) keycodes(syms []xproto.Keysym) []xproto.Keycode {
	var kcs []xproto.Keycode
	for i := 0; i*k.per < len(k.syms); i++ {
		if slices.Contains(syms, k.syms[i*k.per]) {
			kcs = append(kcs, k.min+xproto.Keycode(i))
		}
	}
	return kcs
}

//go:build linux

package platform

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/harkapp/hark/app/platform/x11test"
	"github.com/harkapp/hark/app/trigger"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// feedLog records what a TriggerSource feeds.
type feedLog struct {
	mu  sync.Mutex
	got []string
}

func (f *feedLog) feed(k trigger.Key, down bool) {
	s := "other"
	if k != "" {
		s = string(k)
	}
	if down {
		s += " down"
	} else {
		s += " up"
	}
	f.mu.Lock()
	f.got = append(f.got, s)
	f.mu.Unlock()
}

func (f *feedLog) snapshot() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// inputWindow is a focused window under the pointer that records the key
// and button presses it receives: proof that the trigger takes nothing
// from other apps.
type inputWindow struct {
	mu      sync.Mutex
	keys    []string // "kc/state"
	buttons []byte
}

func newInputWindow(t *testing.T) *inputWindow {
	c, err := xgb.NewConn()
	require.NoError(t, err)
	t.Cleanup(c.Close)
	scr := xproto.Setup(c).DefaultScreen(c)
	id, err := xproto.NewWindowId(c)
	require.NoError(t, err)
	xproto.CreateWindow(c, scr.RootDepth, id, scr.Root, 0, 0, 400, 300, 0, xproto.WindowClassInputOutput,
		scr.RootVisual, xproto.CwEventMask,
		[]uint32{xproto.EventMaskKeyPress | xproto.EventMaskButtonPress | xproto.EventMaskStructureNotify})
	xproto.MapWindow(c, id)
	for {
		ev, err := c.WaitForEvent()
		require.False(t, ev == nil && err == nil, "connection closed")
		if _, ok := ev.(xproto.MapNotifyEvent); ok {
			break
		}
	}
	require.NoError(t, xproto.SetInputFocusChecked(c, xproto.InputFocusPointerRoot, id, xproto.TimeCurrentTime).Check())
	require.NoError(t, xproto.WarpPointerChecked(c, 0, scr.Root, 0, 0, 0, 0, 100, 100).Check())
	w := &inputWindow{}
	go func() {
		for {
			ev, err := c.WaitForEvent()
			if ev == nil && err == nil {
				return
			}
			w.mu.Lock()
			switch e := ev.(type) {
			case xproto.KeyPressEvent:
				w.keys = append(w.keys, keyState(e.Detail, e.State))
			case xproto.ButtonPressEvent:
				w.buttons = append(w.buttons, byte(e.Detail))
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func keyState(kc xproto.Keycode, state uint16) string {
	return string(rune('0'+kc/100)) + string(rune('0'+kc/10%10)) + string(rune('0'+kc%10)) + "/" + string(rune('0'+state&xproto.ModMaskControl/4))
}

func (w *inputWindow) seen() ([]string, []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.keys...), append([]byte(nil), w.buttons...)
}

// xtester injects input through XTEST, as a real device would deliver
// it (raw events included).
type xtester struct {
	c    *xgb.Conn
	root xproto.Window
	km   *keymap
}

func newXtester(t *testing.T) *xtester {
	c, err := xgb.NewConn()
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.NoError(t, xtest.Init(c))
	km, err := loadKeymap(c)
	require.NoError(t, err)
	return &xtester{c: c, root: xproto.Setup(c).DefaultScreen(c).Root, km: km}
}

func (x *xtester) code(t *testing.T, ks xproto.Keysym) byte {
	kc, ok := x.km.keycode(ks)
	require.True(t, ok, "keysym %#x", ks)
	return byte(kc)
}

// play sends a sequence of {type, detail} inputs back to back, and then
// waits for the server to have taken them: a tap's press and release reach
// it together, as a quick tap does. (A round trip after each input, as
// send does, could space them past the 250-ms tap on a loaded machine.)
func (x *xtester) play(t *testing.T, steps [][2]byte) {
	cookies := make([]xtest.FakeInputCookie, len(steps))
	for i, s := range steps {
		cookies[i] = xtest.FakeInputChecked(x.c, s[0], s[1], 0, x.root, 0, 0, 0)
	}
	for _, c := range cookies {
		require.NoError(t, c.Check())
	}
	_, err := xproto.GetInputFocus(x.c).Reply()
	require.NoError(t, err)
}

// expect waits for want to be fed, and nothing else.
func (f *feedLog) expect(t *testing.T, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return len(f.snapshot()) >= len(want) }, shared.Wait(t, 5*time.Second), 10*time.Millisecond, "fed: %v", f.snapshot())
	require.Equal(t, want, f.snapshot())
}

func TestTriggerRawEventsUnderXvfb(t *testing.T) {
	x11test.StartXvfb(t)
	win := newInputWindow(t)
	x := newXtester(t)
	ctrlR, a := x.code(t, 0xffe4), x.code(t, 'a')

	var log feedLog
	src := newTriggerSource()
	require.NoError(t, src.Watch(trigger.RightCtrl, log.feed))

	// A tap of Right Ctrl, then Right Ctrl+A (a shortcut in the focused
	// app), then a mouse click.
	x.play(t, [][2]byte{{xproto.KeyPress, ctrlR}, {xproto.KeyRelease, ctrlR}, {xproto.KeyPress, ctrlR}, {xproto.KeyPress, a}, {xproto.KeyRelease, a}, {xproto.KeyRelease, ctrlR}, {xproto.ButtonPress, 1}, {xproto.ButtonRelease, 1}})
	log.expect(t, "rightctrl down", "rightctrl up", "rightctrl down", "other down", "rightctrl up", "other down")

	// Nothing was taken from the focused window: it saw both Right Ctrl
	// presses and the A with Control held.
	ctrlS, aS := keyState(xproto.Keycode(ctrlR), 0), keyState(xproto.Keycode(a), xproto.ModMaskControl)
	require.Eventually(t, func() bool { k, _ := win.seen(); return len(k) == 3 }, shared.Wait(t, 5*time.Second), 10*time.Millisecond)
	keys, _ := win.seen()
	require.Equal(t, []string{ctrlS, ctrlS, aS}, keys)

	// The same stream through the trigger machine: the tap toggles on,
	// the shortcut does nothing.
	m, err := trigger.New(trigger.RightCtrl, trigger.Config{Mode: trigger.ModeToggle})
	require.NoError(t, err)
	var acts []trigger.Action
	var mu sync.Mutex
	r := trigger.NewRunner(m, func(a trigger.Action) { mu.Lock(); acts = append(acts, a); mu.Unlock() }, nil)
	defer r.Close()
	require.NoError(t, src.Watch(trigger.RightCtrl, r.Feed))
	x.play(t, [][2]byte{{xproto.KeyPress, ctrlR}, {xproto.KeyPress, a}, {xproto.KeyRelease, a}, {xproto.KeyRelease, ctrlR}, {xproto.KeyPress, ctrlR}, {xproto.KeyRelease, ctrlR}})
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acts) == 1 }, shared.Wait(t, 5*time.Second), 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	require.Equal(t, []trigger.Action{trigger.Start}, acts)
	mu.Unlock()

	// After Close nothing is fed.
	require.NoError(t, src.Close())
	n := len(log.snapshot())
	x.play(t, [][2]byte{{xproto.KeyPress, ctrlR}, {xproto.KeyRelease, ctrlR}})
	time.Sleep(100 * time.Millisecond)
	require.Len(t, log.snapshot(), n)
}

func TestTriggerMouseButtonUnderXvfb(t *testing.T) {
	x11test.StartXvfb(t)
	win := newInputWindow(t)
	x := newXtester(t)
	var log feedLog
	src := newTriggerSource()
	require.NoError(t, src.Watch(trigger.Mouse8, log.feed))
	defer src.Close()
	x.play(t, [][2]byte{{xproto.ButtonPress, 8}, {xproto.ButtonRelease, 8}, {xproto.ButtonPress, 9}, {xproto.ButtonRelease, 9}})
	log.expect(t, "mouse8 down", "mouse8 up", "other down")
	require.Eventually(t, func() bool { _, b := win.seen(); return len(b) == 2 }, shared.Wait(t, 5*time.Second), 10*time.Millisecond)
	_, buttons := win.seen()
	require.Equal(t, []byte{8, 9}, buttons, "the window under the pointer still gets the side buttons")
}

// Another app holding the key alone as its hotkey is reported when the
// trigger is set.
func TestTriggerConflictUnderXvfb(t *testing.T) {
	x11test.StartXvfb(t)
	x := newXtester(t)
	ctrlR := x.code(t, 0xffe4)
	require.NoError(t, xproto.GrabKeyChecked(x.c, true, x.root, 0, xproto.Keycode(ctrlR), xproto.GrabModeAsync, xproto.GrabModeAsync).Check())
	require.NoError(t, xproto.GrabButtonChecked(x.c, true, x.root, xproto.EventMaskButtonPress, xproto.GrabModeAsync,
		xproto.GrabModeAsync, 0, 0, 9, 0).Check())
	src := newTriggerSource()
	err := src.Watch(trigger.RightCtrl, func(trigger.Key, bool) {})
	require.ErrorIs(t, err, ErrTriggerTaken)
	require.ErrorContains(t, err, "Right Ctrl is already taken")
	require.ErrorIs(t, src.Watch(trigger.Mouse9, func(trigger.Key, bool) {}), ErrTriggerTaken)
	// A free one works, and the check left no grab behind.
	require.NoError(t, src.Watch(trigger.RightAlt, func(trigger.Key, bool) {}))
	require.NoError(t, src.Close())
	require.NoError(t, src.Watch(trigger.RightAlt, func(trigger.Key, bool) {}))
	require.NoError(t, src.Close())

	require.ErrorContains(t, src.Watch(trigger.Fn, func(trigger.Key, bool) {}), "Fn never reaches the X server")
}

// geConn frames the stream: Generic Events (with their extra words) go
// to onGeneric, replies and core events reach xgb whole and in order.
func TestGeConnFraming(t *testing.T) {
	client, server := net.Pipe()
	var generic [][]byte
	g := &geConn{Conn: client, onGeneric: func(ev []byte) { generic = append(generic, ev) }}
	setup := make([]byte, 8+8)
	setup[0] = 1
	binary.LittleEndian.PutUint16(setup[6:], 2)
	ge := make([]byte, 32+8)
	ge[0], ge[1] = xGenericEvent, 131
	binary.LittleEndian.PutUint32(ge[4:], 2)
	ge[39] = 0xee
	reply := make([]byte, 32+4)
	reply[0] = 1
	binary.LittleEndian.PutUint32(reply[4:], 1)
	reply[35] = 0xaa
	core := make([]byte, 32)
	core[0] = 2
	go func() {
		for _, b := range [][]byte{setup, ge, reply, ge, core} {
			_, _ = server.Write(b)
		}
		server.Close()
	}()
	got, err := io.ReadAll(g) // to the server's EOF
	require.NoError(t, err)
	require.Equal(t, append(append(append([]byte{}, setup...), reply...), core...), got)
	require.Equal(t, [][]byte{ge, ge}, generic)
}

func TestFindXauth(t *testing.T) {
	entry := func(family uint16, addr, disp, name, data string) []byte {
		var b []byte
		b = binary.BigEndian.AppendUint16(b, family)
		for _, s := range []string{addr, disp, name, data} {
			b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
			b = append(b, s...)
		}
		return b
	}
	file := append(entry(256, "otherhost", "0", "MIT-MAGIC-COOKIE-1", "aaaa"), entry(256, "me", "1", "MIT-MAGIC-COOKIE-1", "bbbb")...)
	file = append(file, entry(256, "me", "0", "MIT-MAGIC-COOKIE-1", "cccc")...)
	require.Equal(t, xauth{name: "MIT-MAGIC-COOKIE-1", data: []byte("cccc")}, findXauth(file, "me", "0"))
	require.Equal(t, "bbbb", string(findXauth(file, "me", "1").data))
	require.Equal(t, xauth{}, findXauth(file, "me", "7"))
	require.Equal(t, xauth{}, findXauth(file[:5], "me", "0"), "a truncated file finds nothing")
	wild := entry(65535, "", "3", "MIT-MAGIC-COOKIE-1", "dddd")
	require.Equal(t, "dddd", string(findXauth(wild, "me", "3").data))
}

// On a layout where Right Alt is AltGr (German: keycode 108 gives
// ISO_Level3_Shift, as does the virtual key 92), every such keycode
// counts, and AltGr+E (€) is a chord, not a trigger. (The keymap is the
// one xmodmap -pke shows for setxkbmap -layout de; Xvfb here does not
// take a new layout, so the decoding is checked on raw event bytes.)
func TestTriggerAltGrKeycodes(t *testing.T) {
	km := &keymap{min: 8, per: 2, syms: make([]xproto.Keysym, 2*(255-8+1))}
	set := func(kc int, ks xproto.Keysym) { km.syms[(kc-8)*2] = ks }
	set(26, 'e')
	set(92, 0xfe03)
	set(105, 0xffe4)
	set(108, 0xfe03)
	kcs := km.keycodes(triggerKeysyms[trigger.RightAlt])
	require.Equal(t, []xproto.Keycode{92, 108}, kcs)
	require.Empty(t, km.keycodes(triggerKeysyms[trigger.RightSuper]))

	const xi = 131
	raw := func(typ uint16, detail uint32, flags uint32) []byte {
		b := make([]byte, 40)
		b[0], b[1] = xGenericEvent, xi
		binary.LittleEndian.PutUint32(b[4:], 2)
		binary.LittleEndian.PutUint16(b[8:], typ)
		binary.LittleEndian.PutUint32(b[16:], detail)
		binary.LittleEndian.PutUint32(b[24:], flags)
		return b
	}
	var got []string
	for _, ev := range [][]byte{
		raw(xiRawKeyPress, 108, 0),
		raw(xiRawKeyPress, 108, xiKeyRepeat), // auto-repeat: dropped
		raw(xiRawKeyPress, 26, 0),
		raw(xiRawKeyRelease, 26, 0), // other releases do not matter
		raw(xiRawKeyRelease, 108, 0),
		raw(xiRawButtonPress, 1, 0),
		raw(xiRawButtonRelease, 1, 0),
		raw(17, 0, 0), // XI_RawMotion: not selected, ignored
		append([]byte{xGenericEvent, xi + 1}, raw(xiRawKeyPress, 108, 0)[2:]...), // another extension's event
	} {
		if k, down, ok := decodeRawEvent(ev, xi, kcs, 0, trigger.RightAlt); ok {
			var log feedLog
			log.feed(k, down)
			got = append(got, log.got...)
		}
	}
	require.Equal(t, []string{"rightalt down", "other down", "rightalt up", "other down"}, got)
}

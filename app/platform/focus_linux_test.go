//go:build linux

package platform

import (
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/platform/x11test"

	"github.com/harkapp/hark/internal/shared"
)

func TestWMClass(t *testing.T) {
	for in, want := range map[string]string{"slack\x00Slack\x00": "Slack", "code\x00": "code", "a\x00\x00": "a"} {
		got, err := wmClass([]byte(in))
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := wmClass(nil)
	require.Error(t, err)
}

// Under Xvfb (no window manager) the test publishes _NET_ACTIVE_WINDOW as
// a window manager would; FocusedApp reads the window's WM_CLASS. Return
// reaches the focused window.
func TestFocusAndReturnUnderXvfb(t *testing.T) {
	needTools(t, "xdotool")
	t.Setenv("DISPLAY", "")
	_, err := NewFocus().FocusedApp()
	require.ErrorIs(t, err, ErrNoDisplay)

	x11test.StartXvfb(t)
	// Connected first: Xvfb resets when its last client leaves.
	c, err := xgb.NewConn()
	require.NoError(t, err)
	defer c.Close()
	_, err = NewFocus().FocusedApp()
	require.ErrorContains(t, err, "active window")

	scr := xproto.Setup(c).DefaultScreen(c)
	win, err := xproto.NewWindowId(c)
	require.NoError(t, err)
	require.NoError(t, xproto.CreateWindowChecked(c, scr.RootDepth, win, scr.Root, 0, 0, 10, 10, 0,
		xproto.WindowClassInputOutput, scr.RootVisual, 0, nil).Check())
	class := "thunderbird\x00Thunderbird\x00"
	require.NoError(t, xproto.ChangePropertyChecked(c, xproto.PropModeReplace, win, xproto.AtomWmClass, xproto.AtomString, 8,
		uint32(len(class)), []byte(class)).Check())
	a, err := xproto.InternAtom(c, false, uint16(len("_NET_ACTIVE_WINDOW")), "_NET_ACTIVE_WINDOW").Reply()
	require.NoError(t, err)
	v := make([]byte, 4)
	xgb.Put32(v, uint32(win))
	require.NoError(t, xproto.ChangePropertyChecked(c, xproto.PropModeReplace, scr.Root, a.Atom, xproto.AtomWindow, 32, 1, v).Check())
	got, err := NewFocus().FocusedApp()
	require.NoError(t, err)
	require.Equal(t, "Thunderbird", got)

	w := x11test.NewWindow(t)
	var o Output = newOutput()
	r, ok := o.(Returner)
	require.True(t, ok, "the Linux output presses Return")
	require.NoError(t, o.Insert("hi", ModeType, false))
	require.NoError(t, r.PressReturn())
	require.Eventually(t, func() bool { return w.Text() == "hi\n" }, shared.Wait(t, 5*time.Second), 10*time.Millisecond, "typed: %q", w.Text())
}

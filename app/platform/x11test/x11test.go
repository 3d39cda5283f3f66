//go:build linux

// Package x11test runs a private Xvfb server for tests and gives them a
// window that records the text typed into it. Tests fail (never skip)
// when Xvfb is missing: apt-get install xvfb.
package x11test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/harkapp/hark/internal/shared"
)

// StartXvfb starts Xvfb on a free display, sets DISPLAY for this process
// (t.Setenv) and stops the server when the test ends.
func StartXvfb(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Fatal("x11test: Xvfb not found: install the apt package xvfb")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// -noreset: by default the server resets when its last client leaves,
	// and a client connecting during the reset is refused ("Can't open
	// display"): a test whose own connections all close before its next
	// xdotool call failed that way now and then
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "800x600x24", "-nolisten", "tcp", "-noreset")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatalf("x11test: starting Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatal("x11test: Xvfb reported no display")
		}
		t.Setenv("DISPLAY", ":"+n)
		t.Setenv("WAYLAND_DISPLAY", "")
		return ":" + n
	case <-time.After(shared.Wait(t, 15*time.Second)):
		t.Fatal("x11test: Xvfb did not start")
	}
	return ""
}

// Window is a focused X window that collects what is typed into it.
type Window struct {
	c    *xgb.Conn
	mu   sync.Mutex
	text strings.Builder
	syms []xproto.Keysym
	per  int
	minK xproto.Keycode
}

// NewWindow creates, maps and focuses a window on DISPLAY.
func NewWindow(t testing.TB) *Window {
	t.Helper()
	c, err := xgb.NewConn()
	if err != nil {
		t.Fatalf("x11test: %v", err)
	}
	t.Cleanup(c.Close)
	setup := xproto.Setup(c)
	scr := setup.DefaultScreen(c)
	km, err := xproto.GetKeyboardMapping(c, setup.MinKeycode, byte(setup.MaxKeycode-setup.MinKeycode+1)).Reply()
	if err != nil {
		t.Fatal(err)
	}
	w := &Window{c: c, syms: km.Keysyms, per: int(km.KeysymsPerKeycode), minK: setup.MinKeycode}
	id, err := xproto.NewWindowId(c)
	if err != nil {
		t.Fatal(err)
	}
	xproto.CreateWindow(c, scr.RootDepth, id, scr.Root, 0, 0, 400, 200, 0, xproto.WindowClassInputOutput,
		scr.RootVisual, xproto.CwBackPixel|xproto.CwEventMask,
		[]uint32{scr.WhitePixel, xproto.EventMaskKeyPress | xproto.EventMaskExposure | xproto.EventMaskStructureNotify})
	xproto.MapWindow(c, id)
	// Wait for the map, then focus it (there is no window manager).
	for {
		ev, err := c.WaitForEvent()
		if err != nil {
			continue
		}
		if _, ok := ev.(xproto.MapNotifyEvent); ok {
			break
		}
		if ev == nil {
			t.Fatal("x11test: connection closed")
		}
	}
	if err := xproto.SetInputFocusChecked(c, xproto.InputFocusPointerRoot, id, xproto.TimeCurrentTime).Check(); err != nil {
		t.Fatal(err)
	}
	go w.loop()
	return w
}

func (w *Window) loop() {
	for {
		ev, err := w.c.WaitForEvent()
		if ev == nil && err == nil {
			return
		}
		if k, ok := ev.(xproto.KeyPressEvent); ok {
			col := 0
			if k.State&xproto.ModMaskShift != 0 {
				col = 1
			}
			i := int(k.Detail-w.minK)*w.per + col
			if i < 0 || i >= len(w.syms) {
				continue
			}
			ks := w.syms[i]
			if ks == 0 && col == 1 {
				ks = w.syms[i-1]
			}
			w.mu.Lock()
			switch {
			case ks >= 0x20 && ks <= 0x7e:
				w.text.WriteByte(byte(ks))
			case ks == 0xff0d:
				w.text.WriteByte('\n')
			}
			w.mu.Unlock()
		}
	}
}

// Text is what has been typed so far (printable ASCII and Return).
func (w *Window) Text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.text.String()
}

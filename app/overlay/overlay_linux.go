//go:build linux && cgo

package overlay

// #cgo pkg-config: gtk+-3.0
// #include <stdlib.h>
// #include "overlay_linux.h"
import "C"

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The Linux panel is a GTK popup: the desktop app links GTK already (Wails'
// window is GTK + WebKitGTK), so the overlay costs no new library there,
// and GTK gives it what an X11 window drawn by hand would lack: text
// layout and fonts (Pango), opacity, the monitor under the pointer, and
// XWayland and native Wayland alike. Only the desktop app imports this
// package, so the hark CLI does not link GTK.

// current is the panel's click target: one panel per process.
var current atomic.Pointer[Overlay]

//export harkOverlayClicked
func harkOverlayClicked() {
	if o := current.Load(); o != nil {
		o.clicked()
	}
}

type gtkView struct{}

func (gtkView) show(f Frame) {
	h, m := C.CString(f.Header), C.CString(f.Markup())
	defer C.free(unsafe.Pointer(h))
	defer C.free(unsafe.Pointer(m))
	vis := 0
	if f.Visible {
		vis = 1
	}
	C.hark_overlay_post(h, m, C.double(f.Level), C.int(vis), C.double(f.Opacity))
}

func (v gtkView) close() { v.show(Frame{}) }

var (
	loopOnce sync.Once
	loopErr  error
	loopDone = make(chan struct{})
)

// New makes the overlay. gtkRunning says that GTK's main loop runs
// already (the desktop app's, which Wails runs): the panel's work is
// queued onto it. Otherwise the overlay starts GTK on a thread of its own
// (once per process).
func New(opt Options, gtkRunning bool) (*Overlay, error) {
	if !gtkRunning {
		loopOnce.Do(func() {
			errc := make(chan error)
			go func() {
				runtime.LockOSThread() // GTK belongs to the thread that runs its loop
				if C.hark_overlay_init() == 0 {
					errc <- errors.New("overlay: GTK could not open the display (is DISPLAY or WAYLAND_DISPLAY set?)")
					return
				}
				errc <- nil
				C.hark_overlay_main()
				close(loopDone)
			}()
			loopErr = <-errc
		})
		if loopErr != nil {
			return nil, loopErr
		}
	}
	o := newOverlay(gtkView{}, opt)
	current.Store(o)
	return o, nil
}

// shutdownLoop ends the overlay's own GTK loop and its display
// connection, for good (tests: before their Xvfb stops).
func shutdownLoop() {
	C.hark_overlay_shutdown()
	<-loopDone
}

// shown is what the panel shows ("header\ntext"), whether it is visible,
// and where (tests).
func shown() (text string, visible bool, x, y, w, h int) {
	var v, cx, cy, cw, ch C.int
	s := C.hark_overlay_read(&v, &cx, &cy, &cw, &ch)
	defer C.free(unsafe.Pointer(s))
	return C.GoString(s), v != 0, int(cx), int(cy), int(cw), int(ch)
}

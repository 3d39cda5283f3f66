//go:build linux && cgo

package overlay

// #cgo pkg-config: gtk+-3.0
// #include <stdlib.h>
// #include "overlay_linux.h"
import "C"

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/harkapp/hark/internal/place"
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

//export harkOverlayPlace
func harkOverlayPlace(hasCaret, cx, cy, cw, ch, ax, ay, aw, ah, w, h C.int, x, y *C.int) {
	work := place.Rect{X: float64(ax), Y: float64(ay), W: float64(aw), H: float64(ah)}
	px, py := place.BottomCentre(work, float64(w), float64(h))
	if hasCaret != 0 {
		caret := place.Rect{X: float64(cx), Y: float64(cy), W: float64(cw), H: float64(ch)}
		px, py = place.BelowCaret(caret, work, float64(w), float64(h))
	}
	*x, *y = C.int(math.Round(px)), C.int(math.Round(py))
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
	var has C.int
	var c place.Rect
	if f.Caret != nil {
		has, c = 1, *f.Caret
	}
	C.hark_overlay_post(h, m, C.double(f.Level), C.int(vis), C.double(f.Opacity),
		has, C.int(c.X), C.int(c.Y), C.int(c.W), C.int(c.H))
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
	if opt.Caret == nil {
		opt.Caret = atspiCaret
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

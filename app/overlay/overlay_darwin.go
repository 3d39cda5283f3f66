package overlay

import (
	"sync/atomic"

	"github.com/harkapp/hark/macos/panel"
)

// The macOS panel is an NSPanel through purego (macos/panel): no cgo, as
// the rest of the macOS integration.
type panelView struct{ p *panel.Panel }

func (v panelView) show(f Frame) {
	v.p.Show(panel.Frame{Visible: f.Visible, Opacity: f.Opacity, Level: f.Level, Header: f.Header,
		Committed: f.Committed, Tentative: tentativeWithNote(f), Caret: f.Caret})
}

func (v panelView) close() { v.p.Close() }

// tentativeWithNote puts a note (a device change, an error) after the
// text, dimmed with the tentative tail.
func tentativeWithNote(f Frame) string {
	if f.Note == "" {
		return f.Tentative
	}
	return f.Tentative + "\n" + f.Note
}

// New makes the overlay on AppKit's main loop (Wails' run loop: the
// argument is for Linux, where GTK's loop may be the overlay's own).
func New(opt Options, _ bool) (*Overlay, error) {
	var cur atomic.Pointer[Overlay] // the click's target, once made
	p, err := panel.New(func() {
		if o := cur.Load(); o != nil {
			o.clicked()
		}
	})
	if err != nil {
		return nil, err
	}
	if opt.Caret == nil {
		opt.Caret = axCaret
	}
	o := newOverlay(panelView{p}, opt)
	cur.Store(o)
	return o, nil
}

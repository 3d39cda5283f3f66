//go:build linux && cgo

package overlay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/harkapp/hark/internal/place"
)

// The text cursor on Linux comes from AT-SPI, the desktop's accessibility
// bus (what screen readers use): GTK apps always put their widgets there;
// Qt, Chromium and Firefox only while the desktop's accessibility is on
// (Hark does not switch it on behind the user's back). It is spoken over
// D-Bus in Go (as Wails already does), not through libatspi: the lookup
// runs on a goroutine of its own, so it never blocks GTK's loop, and when
// the focused text field is Hark's own window the bridge answering on
// that loop is free to answer.

const (
	a11yRegistry = "org.a11y.atspi.Registry"
	a11yRoot     = dbus.ObjectPath("/org/a11y/atspi/accessible/root")
	ifAccessible = "org.a11y.atspi.Accessible"
	ifText       = "org.a11y.atspi.Text"
	ifComponent  = "org.a11y.atspi.Component"

	// AtspiStateType bits (atspi-constants.h), in GetState's two words.
	stateActive    = 1
	stateFocused   = 12
	stateMultiLine = 17
	stateShowing   = 25

	coordScreen = 0 // ATSPI_COORD_TYPE_SCREEN

	// maxNodes bounds the walk for the focused widget: a huge document
	// (a spreadsheet's cells) must not keep it going.
	maxNodes = 4000
	// lineGuess is a caret's height where only a multi-line field's box
	// is known.
	lineGuess = 20
)

// accessible is an AT-SPI object reference, D-Bus's (so).
type accessible struct {
	Name string
	Path dbus.ObjectPath
}

// atspiCaret finds the focused accessible with a text caret and the
// caret's rectangle on the screen.
func atspiCaret(ctx context.Context) (place.Rect, error) {
	if os.Getenv("WAYLAND_DISPLAY") != "" && !strings.Contains(os.Getenv("GDK_BACKEND"), "x11") {
		return place.Rect{}, errors.New("on Wayland, apps do not tell where on the screen their text cursor is")
	}
	conn, err := a11yBus(ctx)
	if err != nil {
		return place.Rect{}, fmt.Errorf("no accessibility bus: %w", err)
	}
	defer conn.Close()
	b := bus{ctx: ctx, conn: conn}
	el, err := b.focused()
	if err != nil {
		return place.Rect{}, err
	}
	return b.caret(el)
}

// a11yBus connects to the accessibility bus, whose address the session
// bus's org.a11y.Bus gives (starting at-spi-bus-launcher if need be).
func a11yBus(ctx context.Context) (*dbus.Conn, error) {
	addr := os.Getenv("AT_SPI_BUS_ADDRESS")
	if addr == "" {
		s, err := dbus.ConnectSessionBus(dbus.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		defer s.Close()
		if err := s.Object("org.a11y.Bus", "/org/a11y/bus").CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr); err != nil {
			return nil, err
		}
	}
	return dbus.Connect(addr, dbus.WithContext(ctx))
}

// bus makes AT-SPI calls under one deadline.
type bus struct {
	ctx  context.Context
	conn *dbus.Conn
}

func (b bus) call(el accessible, method string, out any, args ...any) error {
	return b.conn.Object(el.Name, el.Path).CallWithContext(b.ctx, method, 0, args...).Store(out)
}

func (b bus) children(el accessible) ([]accessible, error) {
	var kids []accessible
	return kids, b.call(el, ifAccessible+".GetChildren", &kids)
}

func (b bus) state(el accessible) (func(bit uint) bool, error) {
	var words []uint32
	if err := b.call(el, ifAccessible+".GetState", &words); err != nil {
		return nil, err
	}
	return func(bit uint) bool { return int(bit/32) < len(words) && words[bit/32]&(1<<(bit%32)) != 0 }, nil
}

// focused walks from the active window of each application to the
// widget that has the keyboard focus, through showing widgets only.
func (b bus) focused() (accessible, error) {
	apps, err := b.children(accessible{a11yRegistry, a11yRoot})
	if err != nil {
		return accessible{}, err
	}
	budget := maxNodes
	for _, app := range apps {
		wins, err := b.children(app)
		if err != nil {
			continue // an app that went away, or hangs: the others may have the focus
		}
		for _, w := range wins {
			st, err := b.state(w)
			if err != nil || !st(stateActive) {
				continue
			}
			if el, ok := b.find(w, &budget); ok {
				return el, nil
			}
		}
		if b.ctx.Err() != nil {
			return accessible{}, b.ctx.Err()
		}
	}
	return accessible{}, errors.New("no focused widget in an active window")
}

// find is the focused widget under el, depth first.
func (b bus) find(el accessible, budget *int) (accessible, bool) {
	kids, err := b.children(el)
	if err != nil {
		return accessible{}, false
	}
	for _, k := range kids {
		if *budget--; *budget < 0 || b.ctx.Err() != nil {
			return accessible{}, false
		}
		st, err := b.state(k)
		if err != nil || !st(stateShowing) {
			continue
		}
		if st(stateFocused) {
			return k, true
		}
		if f, ok := b.find(k, budget); ok {
			return f, true
		}
	}
	return accessible{}, false
}

// caret is the rectangle of el's text cursor: the extents of the
// character after it, or of the one before it at the end of the text
// (its right edge), or, in an empty field, the field's first line.
func (b bus) caret(el accessible) (place.Rect, error) {
	var v dbus.Variant
	if err := b.call(el, "org.freedesktop.DBus.Properties.Get", &v, ifText, "CaretOffset"); err != nil {
		return place.Rect{}, fmt.Errorf("the focused widget has no text cursor: %w", err)
	}
	off, ok := v.Value().(int32)
	if !ok || off < 0 {
		return place.Rect{}, errors.New("the focused widget has no text cursor")
	}
	if r, err := b.charExtents(el, off); err == nil && r.H > 0 {
		return place.Rect{X: r.X, Y: r.Y, H: r.H}, nil
	}
	if off > 0 {
		if r, err := b.charExtents(el, off-1); err == nil && r.H > 0 {
			return place.Rect{X: r.X + r.W, Y: r.Y, H: r.H}, nil
		}
	}
	var e struct{ X, Y, W, H int32 }
	if err := b.call(el, ifComponent+".GetExtents", &e, uint32(coordScreen)); err != nil || e.H <= 0 {
		return place.Rect{}, fmt.Errorf("the focused widget does not say where its text cursor is (%v)", err)
	}
	h := e.H
	if st, err := b.state(el); err == nil && st(stateMultiLine) {
		h = min(h, lineGuess)
	}
	return place.Rect{X: float64(e.X), Y: float64(e.Y), H: float64(h)}, nil
}

func (b bus) charExtents(el accessible, off int32) (place.Rect, error) {
	var x, y, w, h int32
	err := b.conn.Object(el.Name, el.Path).CallWithContext(b.ctx, ifText+".GetCharacterExtents", 0, off, uint32(coordScreen)).
		Store(&x, &y, &w, &h)
	return place.Rect{X: float64(x), Y: float64(y), W: float64(w), H: float64(h)}, err
}

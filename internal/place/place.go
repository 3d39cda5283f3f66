// Package place is where the recording overlay goes on a screen: at the
// bottom centre of the active screen, or just below the text cursor. The
// geometry is shared by the GTK popup (app/overlay) and the NSPanel
// (macos/panel); coordinates have their origin at the top left, as X11,
// AT-SPI and macOS Accessibility give them (the panel flips Cocoa's).
package place

// Rect is a rectangle on the screen: a caret, a screen's work area.
type Rect struct{ X, Y, W, H float64 }

const (
	// gap is the space between the caret's line and the panel.
	gap = 6
	// inset is the panel's padding: the panel moves left by it, so its
	// text starts under the caret.
	inset = 12
)

// BottomCentre is the panel's top-left corner when it sits centred near
// the bottom of work (a twelfth of its height above the bottom edge),
// clear of a dock or taskbar.
func BottomCentre(work Rect, w, h float64) (x, y float64) {
	return work.X + (work.W-w)/2, work.Y + work.H - h - work.H/12
}

// BelowCaret is the panel's top-left corner just below the caret, its
// text starting under it. With no room below, the panel goes above the
// caret's line (covering neither); it is kept inside work either way.
func BelowCaret(caret, work Rect, w, h float64) (x, y float64) {
	x, y = caret.X-inset, caret.Y+caret.H+gap
	if y+h > work.Y+work.H {
		y = caret.Y - gap - h
	}
	return clamp(x, work.X, work.X+work.W-w), clamp(y, work.Y, work.Y+work.H-h)
}

// Contains says whether the caret's point lies in r (which screen it is on).
func (r Rect) Contains(x, y float64) bool {
	return x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H
}

// clamp keeps v in [lo, hi]; a panel wider than the screen keeps its
// left edge on it.
func clamp(v, lo, hi float64) float64 {
	return max(lo, min(v, hi))
}

package panel

import (
	"github.com/ebitengine/purego/objc"

	"github.com/harkapp/hark/internal/ns"
	"github.com/harkapp/hark/internal/place"
)

// frameFor is the panel's frame, in Cocoa's coordinates (y up from the
// bottom of the primary screen): below the caret on the screen that shows
// it, or at the bottom centre of the main screen (the one with the key
// window). The geometry is app/overlay/place's, in the top-left-origin
// coordinates Accessibility gives the caret in: screens are flipped into
// them and the result back. Main thread.
func frameFor(caret *place.Rect) (nsRect, bool) {
	screens := objc.ID(objc.GetClass("NSScreen")).Send(selScreens)
	if screens == 0 || ns.Count(screens) == 0 {
		return nsRect{}, false
	}
	top := objc.Send[nsRect](ns.At(screens, 0), selFrame).Height
	flip := func(r nsRect) place.Rect { return place.Rect{X: r.X, Y: top - r.Y - r.Height, W: r.Width, H: r.Height} }
	var x, y float64
	found := false
	if caret != nil {
		for i := range ns.Count(screens) {
			s := ns.At(screens, i)
			if flip(objc.Send[nsRect](s, selFrame)).Contains(caret.X, caret.Y) {
				x, y = place.BelowCaret(*caret, flip(objc.Send[nsRect](s, selVisibleFrame)), width, height)
				found = true
				break
			}
		}
	}
	if !found {
		main := objc.ID(objc.GetClass("NSScreen")).Send(selMainScreen)
		if main == 0 {
			return nsRect{}, false
		}
		x, y = place.BottomCentre(flip(objc.Send[nsRect](main, selVisibleFrame)), width, height)
	}
	return nsRect{X: x, Y: top - y - height, Width: width, Height: height}, true
}

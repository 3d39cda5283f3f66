package overlay

import (
	"context"

	"github.com/harkapp/hark/internal/place"
	"github.com/harkapp/hark/macos/textfield"
)

// axCaret is the focused text field's cursor through macOS Accessibility
// (macos/textfield). Accessibility calls block; one that outlasts ctx is
// left to finish on its own.
func axCaret(ctx context.Context) (place.Rect, error) {
	type result struct {
		r   place.Rect
		err error
	}
	c := make(chan result, 1)
	go func() {
		x, y, h, err := textfield.Caret()
		c <- result{place.Rect{X: x, Y: y, H: h}, err}
	}()
	select {
	case r := <-c:
		return r.r, r.err
	case <-ctx.Done():
		return place.Rect{}, ctx.Err()
	}
}

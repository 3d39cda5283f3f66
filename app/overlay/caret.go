package overlay

import (
	"context"
	"time"

	"github.com/harkapp/hark/internal/place"
)

// Locator finds the focused app's text cursor on the screen (top-left
// origin); an error says why there is none (no text field focused, no
// accessibility bus, the app did not answer in time).
type Locator func(ctx context.Context) (place.Rect, error)

// caretTimeout bounds a lookup: the panel waits for it before it first
// shows, and an app that does not answer must not hide it longer.
const caretTimeout = 400 * time.Millisecond

// locate finds the text cursor for lookup n and shows the panel below
// it, or at the bottom centre when there is none (logged once: the
// setting asks for something this desktop or app does not give).
func (o *Overlay) locate(n int) {
	ctx, cancel := context.WithTimeout(context.Background(), caretTimeout)
	defer cancel()
	r, err := o.opt.Caret(ctx)
	o.set(func() {
		if n != o.lookups {
			return // a newer recording's lookup is under way
		}
		o.locating = false
		if err == nil {
			o.caret = &r
			return
		}
		if !o.warned {
			o.warned = true
			o.opt.Logf("overlay: no text cursor to show the panel near (%v): it shows at the bottom centre", err)
		}
	})
}

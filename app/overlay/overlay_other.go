//go:build !(linux && cgo) && !darwin

package overlay

import "errors"

// New: no native panel in this build (Linux without cgo).
func New(Options, bool) (*Overlay, error) {
	return nil, errors.New("overlay: not available in this build (it needs cgo and GTK on Linux)")
}

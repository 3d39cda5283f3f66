//go:build !darwin

package metal

import "errors"

// ErrUnavailable is returned by New where there is no Metal.
var ErrUnavailable = errors.New("metal: Metal is only available on macOS")

// New returns ErrUnavailable: Metal exists only on macOS.
func New() (*Backend, error) { return nil, ErrUnavailable }

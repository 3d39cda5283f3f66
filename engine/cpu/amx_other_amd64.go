//go:build !linux

package cpu

import "errors"

// amxWorks: only Linux is asked for the tile data permission (macOS on
// Intel has no AMX).
func amxWorks() error { return errors.New("AMX is used on Linux only") }

// Package login registers the app to open at login through SMAppService
// (macOS 13+). It acts only when the user opts in: nothing here runs on its
// own. The status rules are platform independent (this file).
package login

import (
	"errors"
	"fmt"
)

// Status is SMAppServiceStatus.
type Status int

// SMAppServiceStatus values.
const (
	NotRegistered    Status = 0
	Enabled          Status = 1
	RequiresApproval Status = 2 // registered; the user must allow it in System Settings > Login Items
	NotFound         Status = 3 // the service (our bundle) could not be found
)

func (s Status) String() string {
	switch s {
	case NotRegistered:
		return "not-registered"
	case Enabled:
		return "enabled"
	case RequiresApproval:
		return "requires-approval"
	case NotFound:
		return "not-found"
	}
	return fmt.Sprintf("unknown(%d)", int(s))
}

// ErrRequiresApproval means the login item is registered but macOS waits
// for the user to allow it in System Settings > General > Login Items.
var ErrRequiresApproval = errors.New("login: allow Hark in System Settings > General > Login Items to finish turning on launch at login")

// ErrUnsupported means this macOS has no SMAppService (before 13).
var ErrUnsupported = errors.New("login: launch at login needs macOS 13 or later")

type action int

const (
	none action = iota
	register
	unregister
)

// plan decides what SetEnabled(want) must do from the current status.
// Registering again while approval is pending is harmless and lets macOS
// re-post its notification; unregistering something never registered
// fails on macOS, so it is skipped.
func plan(cur Status, want bool) action {
	if want {
		if cur == Enabled {
			return none
		}
		return register
	}
	if cur == Enabled || cur == RequiresApproval {
		return unregister
	}
	return none
}

// result turns the status read after a register into the caller's error.
func result(after Status, want bool) error {
	switch {
	case want && after == RequiresApproval:
		return ErrRequiresApproval
	case want && after != Enabled:
		return fmt.Errorf("login: launch at login did not turn on (status %s)", after)
	case !want && after == Enabled:
		return fmt.Errorf("login: launch at login is still on (status %s)", after)
	}
	return nil
}

package platform

import (
	"github.com/harkapp/hark/macos/focus"
	"github.com/harkapp/hark/macos/paste"
)

// NewFocus reports the frontmost app's bundle identifier (NSWorkspace).
func NewFocus() Focus { return darwinFocus{} }

type darwinFocus struct{}

func (darwinFocus) FocusedApp() (string, error) { return focus.Frontmost() }

func (darwinOutput) PressReturn() error { return paste.PressReturn() }

package app

import (
	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/internal/version"
)

// About tells the UI which Hark this is (Settings > About; the macOS app
// menu shows the same line).
type About struct{}

// Info is the stamped version, commit, build date and compiled-in
// backends.
func (*About) Info() version.Info { return version.Get(backends.Compiled()) }

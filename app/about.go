package app

import (
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/internal/version"
)

// About tells the UI which Hark this is (Settings > About; the macOS app
// menu shows the same line).
type About struct{}

// Info is the stamped version, commit, build date and the backends this
// machine would use (from the driver list the binary registered).
func (*About) Info() version.Info { return version.Get(backends.Here()) }

// Features says which OS settings work on this platform: Settings hides
// the others (a menu-bar icon or Dock switch that does nothing on Linux).
func (*About) Features() platform.Features { return platform.Supported() }

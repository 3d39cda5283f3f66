// Package drivers is the binary's wiring of the GPU backends: it registers
// Metal and CUDA with engine/backends, in the order auto tries them (the
// CPU, which engine/backends holds itself, stays last). The GPU packages
// import the engine, so the engine cannot name them; the CLI (cli.Execute)
// and the desktop app (desktop.Run) call Register before anything opens a
// backend. A new GPU backend is one line in Register.
package drivers

import (
	"sync"

	"github.com/harkapp/hark/engine/backends"
)

var once sync.Once

// Register adds the GPU drivers to engine/backends; calls after the first
// do nothing.
func Register() {
	once.Do(func() {
		backends.Register(backends.Driver{Name: backends.Metal, Open: openMetalDriver, Here: metalHere})
		backends.Register(backends.Driver{Name: backends.CUDA, Open: openCUDADriver, Here: func() bool { return cudaHere() }})
	})
}

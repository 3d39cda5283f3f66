package runtime

import (
	"sync"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/models"
)

// gpuOnce asks the drivers once per process which GPU auto would pick
// (starting a GPU backend takes a while).
var gpuOnce = sync.OnceValue(backends.GPU)

// ThisMachine describes this machine for the model advice: the threads
// the CPU backend uses, the CPU's vector instructions and, unless the
// backend choice is "cpu", the GPU auto would run on.
func ThisMachine(choice string) models.Machine {
	m := models.Machine{Cores: cpu.DefaultThreads(), SIMD: cpu.SIMD()}
	if choice != backends.CPU {
		m.GPU = gpuOnce()
	}
	return m
}

package drivers

import (
	"errors"
	"fmt"

	"github.com/harkapp/hark/cuda"
	"github.com/harkapp/hark/engine/backends"
)

// minCUDAFree is the free GPU memory below which auto keeps to the CPU.
const minCUDAFree = 512 << 20

// openCUDADriver opens GPU o.GPU with the CUDA backend; for auto, no driver or
// GPU is ErrNotHere and a nearly full GPU is refused with the reason.
func openCUDADriver(o backends.Options, auto bool) (backends.Backend, error) {
	b, err := cuda.New(cuda.Options{Device: o.GPU, Notice: o.Log})
	if errors.Is(err, cuda.ErrUnavailable) && auto {
		return nil, backends.ErrNotHere
	}
	if err != nil {
		return nil, err
	}
	if in := b.Info(); auto && in.FreeMemory < minCUDAFree {
		b.Close()
		return nil, fmt.Errorf("%s has only %d MiB free; --backend cuda forces it", in.Name, in.FreeMemory>>20)
	}
	return b, nil
}

// cudaHere is CUDA's Driver.Here; a seam for tests.
var cudaHere = cuda.Present

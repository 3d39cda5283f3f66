// Package backends picks the backend a model runs on: Metal by default on
// Apple GPUs, CUDA on Linux with an NVIDIA GPU, the CPU otherwise or when
// asked, and the CPU again (with the reason) when a GPU backend fails at
// start-up.
package backends

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/harkapp/hark/cuda"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/metal"
	"github.com/harkapp/hark/shaders"
)

// Backend names accepted by Open (the --backend flag).
const (
	Auto  = "auto"
	CPU   = "cpu"
	Metal = "metal"
	CUDA  = "cuda"
)

// Names lists the accepted names, for flag help.
var Names = []string{Auto, CPU, Metal, CUDA}

// minCUDAFree is the free GPU memory below which auto keeps to the CPU
// (the shared models need far less; a GPU this full is someone else's).
const minCUDAFree = 512 << 20

// Backend is a plan.Backend that owns resources until Close.
type Backend interface {
	plan.Backend
	Close()
}

// appleFamilies are the families of Apple-designed GPUs, where Metal is the
// default; on other Macs (Intel, "mac2") the CPU stays the default.
var appleFamilies = map[string]bool{"apple7": true, "apple8": true, "apple9": true}

// Seams for tests: the Metal opener and the list of kernels without MSL.
var (
	openMetal = func() (Backend, metal.Info, error) {
		b, err := metal.New()
		if err != nil {
			return nil, metal.Info{}, err
		}
		return b, b.Info(), nil
	}
	missingKernels = shaders.Missing
	goos           = runtime.GOOS
	openCUDA       = func(gpu int) (Backend, cuda.Info, error) {
		b, err := cuda.New(cuda.Options{Device: gpu})
		if err != nil {
			return nil, cuda.Info{}, err
		}
		return b, b.Info(), nil
	}
)

// Open returns the backend called name ("" means auto) with threads CPU
// workers (0 = all cores) where the CPU is used.
//
// auto picks Metal on a Mac with an Apple GPU once every kernel has an MSL
// version, and the CPU otherwise; when Metal was expected but failed to
// start, reason says why the CPU was used instead (callers log it). reason
// is empty when nothing noteworthy happened. metal asks for Metal and fails
// rather than fall back.
func Open(name string, threads int) (Backend, string, error) { return OpenGPU(name, threads, 0) }

// OpenGPU is Open on GPU ordinal gpu where the backend is CUDA (--gpu).
// On Linux, auto picks CUDA when the driver loads, a GPU of compute
// capability 7.5 or newer is there and it has memory free; with no driver
// or GPU the CPU is used without comment, otherwise with the reason.
// cuda asks for CUDA and fails rather than fall back.
func OpenGPU(name string, threads, gpu int) (Backend, string, error) {
	switch strings.ToLower(name) {
	case "", Auto:
		if goos == "linux" {
			b, in, err := openCUDA(gpu)
			switch {
			case errors.Is(err, cuda.ErrUnavailable):
				return cpuBackend(threads), "", nil
			case err != nil:
				return cpuBackend(threads), fmt.Sprintf("using the CPU: %v", err), nil
			case in.FreeMemory < minCUDAFree:
				b.Close()
				return cpuBackend(threads), fmt.Sprintf("using the CPU: %s has only %d MiB free; --backend cuda forces it", in.Name, in.FreeMemory>>20), nil
			}
			return b, "", nil
		}
		if goos != "darwin" {
			return cpuBackend(threads), "", nil
		}
		b, in, err := openMetalChecked()
		if err != nil {
			return cpuBackend(threads), fmt.Sprintf("using the CPU: %v", err), nil
		}
		if !appleFamilies[in.Family] {
			b.Close()
			return cpuBackend(threads), fmt.Sprintf("using the CPU: %s is not an Apple GPU (family %s); --backend metal forces it", in.Name, in.Family), nil
		}
		return b, "", nil
	case CPU:
		return cpuBackend(threads), "", nil
	case Metal:
		b, _, err := openMetalChecked()
		if err != nil {
			return nil, "", err
		}
		return b, "", nil
	case CUDA:
		b, _, err := openCUDA(gpu)
		if err != nil {
			return nil, "", err
		}
		return b, "", nil
	}
	return nil, "", fmt.Errorf("unknown backend %q (want %s)", name, strings.Join(Names, ", "))
}

func cpuBackend(threads int) Backend { return cpu.New(cpu.Options{Threads: threads}) }

// openMetalChecked opens Metal and refuses it while kernels are missing,
// since every plan uses most of them.
func openMetalChecked() (Backend, metal.Info, error) {
	if m := missingKernels(); len(m) > 0 {
		names := make([]string, len(m))
		for i, k := range m {
			names[i] = k.String()
		}
		return nil, metal.Info{}, fmt.Errorf("metal: no MSL kernel yet for %s", strings.Join(names, ", "))
	}
	b, in, err := openMetal()
	if err != nil {
		return nil, metal.Info{}, err
	}
	return b, in, nil
}

package backends

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/cuda"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/metal"
)

type fakeMetal struct{ closed bool }

func (f *fakeMetal) Name() string                             { return "metal" }
func (f *fakeMetal) Load(*plan.Plan) (plan.Executable, error) { return nil, errors.New("fake") }
func (f *fakeMetal) Close()                                   { f.closed = true }

// swap installs the seams for one test.
func swap(t *testing.T, os string, missing []plan.Kernel, info metal.Info, openErr error) *fakeMetal {
	t.Helper()
	fm := &fakeMetal{}
	oldOpen, oldMissing, oldOS := openMetal, missingKernels, goos
	t.Cleanup(func() { openMetal, missingKernels, goos = oldOpen, oldMissing, oldOS })
	goos = os
	missingKernels = func() []plan.Kernel { return missing }
	openMetal = func() (Backend, metal.Info, error) {
		if openErr != nil {
			return nil, metal.Info{}, openErr
		}
		return fm, info, nil
	}
	return fm
}

func name(t *testing.T, b Backend) string {
	t.Helper()
	t.Cleanup(b.Close)
	return b.Name()
}

func TestOpenOnThisMachine(t *testing.T) {
	// Linux: auto is the CPU without comment, metal is an error.
	// (no GPU on CI machines: the CUDA opener is a fake saying so)
	swapCUDA(t, nil, cuda.Info{}, fmt.Errorf("%w: test", cuda.ErrUnavailable))
	b, reason, err := Open("", 1)
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Empty(t, reason)
	b, _, err = Open("CPU", 1)
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	_, _, err = Open("metal", 1)
	require.Error(t, err)
	_, _, err = Open("vulkan", 1)
	require.EqualError(t, err, `unknown backend "vulkan" (want auto, cpu, metal, cuda)`)
}

func TestAutoOnAMac(t *testing.T) {
	apple := metal.Info{Name: "Apple M2", Family: "apple8"}

	fm := swap(t, "darwin", nil, apple, nil)
	b, reason, err := Open(Auto, 0)
	require.NoError(t, err)
	require.Equal(t, "metal", b.Name())
	require.Empty(t, reason)
	require.False(t, fm.closed)

	// Kernels still missing: the CPU, saying which.
	swap(t, "darwin", []plan.Kernel{plan.Attention, plan.Sample}, apple, nil)
	b, reason, err = Open(Auto, 1)
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Equal(t, "using the CPU: metal: no MSL kernel yet for attention, sample", reason)
	_, _, err = Open(Metal, 1)
	require.ErrorContains(t, err, "no MSL kernel yet for attention, sample")

	// Metal fails to start: the CPU with Metal's message.
	swap(t, "darwin", nil, apple, errors.New("metal: compiling the shader library: program_source:12: error"))
	b, reason, err = Open(Auto, 1)
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Contains(t, reason, "program_source:12: error")

	// An Intel Mac's GPU: the CPU by default, Metal when asked.
	fm = swap(t, "darwin", nil, metal.Info{Name: "AMD Radeon Pro 5500M", Family: "mac2"}, nil)
	b, reason, err = Open(Auto, 1)
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Contains(t, reason, "AMD Radeon Pro 5500M is not an Apple GPU")
	require.True(t, fm.closed)
	b, _, err = Open(Metal, 1)
	require.NoError(t, err)
	require.Equal(t, "metal", b.Name())
}

type fakeCUDA struct{ closed bool }

func (f *fakeCUDA) Name() string                             { return "cuda" }
func (f *fakeCUDA) Load(*plan.Plan) (plan.Executable, error) { return nil, errors.New("fake") }
func (f *fakeCUDA) Close()                                   { f.closed = true }

// swapCUDA installs a fake CUDA opener for one test; gpus records the
// ordinals asked for.
func swapCUDA(t *testing.T, gpus *[]int, info cuda.Info, openErr error) *fakeCUDA {
	t.Helper()
	fc := &fakeCUDA{}
	old := openCUDA
	t.Cleanup(func() { openCUDA = old })
	openCUDA = func(gpu int) (Backend, cuda.Info, error) {
		if gpus != nil {
			*gpus = append(*gpus, gpu)
		}
		if openErr != nil {
			return nil, cuda.Info{}, openErr
		}
		return fc, info, nil
	}
	return fc
}

func TestAutoOnLinux(t *testing.T) {
	h100 := cuda.Info{Name: "NVIDIA H100", Compute: 90, FreeMemory: 80 << 30}
	swap(t, "linux", nil, metal.Info{}, errors.New("no metal"))

	var gpus []int
	swapCUDA(t, &gpus, h100, nil)
	b, reason, err := OpenGPU("auto", 1, 1)
	require.NoError(t, err)
	require.Equal(t, "cuda", name(t, b))
	require.Empty(t, reason)
	require.Equal(t, []int{1}, gpus)

	// no driver or GPU: the CPU, nothing to say
	swapCUDA(t, nil, cuda.Info{}, fmt.Errorf("%w: libcuda.so.1 not found", cuda.ErrUnavailable))
	b, reason, err = Open("", 1)
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Empty(t, reason)
	_, _, err = Open("cuda", 1)
	require.ErrorIs(t, err, cuda.ErrUnavailable)

	// a GPU that is too old (or any other failure): the CPU, saying why
	swapCUDA(t, nil, cuda.Info{}, errors.New("cuda: Tesla P4 is compute capability 6.1; Hark's kernels need 7.5 or newer"))
	b, reason, err = Open("", 1)
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Contains(t, reason, "using the CPU: cuda: Tesla P4 is compute capability 6.1")

	// a full GPU: the CPU, saying why; cuda still forces it
	full := h100
	full.FreeMemory = 100 << 20
	fc := swapCUDA(t, nil, full, nil)
	b, reason, err = Open("", 1)
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.True(t, fc.closed)
	require.Contains(t, reason, "has only 100 MiB free")
	b, _, err = Open("cuda", 1)
	require.NoError(t, err)
	require.Equal(t, "cuda", name(t, b))
}

package drivers

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/backends"
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
	Register()
	fm := &fakeMetal{}
	oldOpen, oldMissing, oldOS, oldArch := openMetal, missingKernels, goos, goarch
	t.Cleanup(func() { openMetal, missingKernels, goos, goarch = oldOpen, oldMissing, oldOS, oldArch })
	goos = os
	missingKernels = func() []plan.Kernel { return missing }
	openMetal = func() (backends.Backend, metal.Info, error) {
		if openErr != nil {
			return nil, metal.Info{}, openErr
		}
		return fm, info, nil
	}
	return fm
}

func name(t *testing.T, b backends.Backend) string {
	t.Helper()
	t.Cleanup(b.Close)
	return b.Name()
}

func TestAutoOnAMac(t *testing.T) {
	apple := metal.Info{Name: "Apple M2", Family: "apple8"}

	fm := swap(t, "darwin", nil, apple, nil)
	b, reason, err := backends.Open(backends.Auto, backends.Options{Threads: 0})
	require.NoError(t, err)
	require.Equal(t, "metal", b.Name())
	require.Empty(t, reason)
	require.False(t, fm.closed)

	// Kernels still missing: the CPU, saying which.
	swap(t, "darwin", []plan.Kernel{plan.Attention, plan.Sample}, apple, nil)
	b, reason, err = backends.Open(backends.Auto, backends.Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Equal(t, "using the CPU: metal: no MSL kernel yet for attention, sample", reason)
	_, _, err = backends.Open(backends.Metal, backends.Options{Threads: 1})
	require.ErrorContains(t, err, "no MSL kernel yet for attention, sample")

	// backends.Metal fails to start: the CPU with backends.Metal's message.
	swap(t, "darwin", nil, apple, errors.New("metal: compiling the shader library: program_source:12: error"))
	b, reason, err = backends.Open(backends.Auto, backends.Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Contains(t, reason, "program_source:12: error")

	// An Intel Mac's GPU: the CPU by default, backends.Metal when asked.
	fm = swap(t, "darwin", nil, metal.Info{Name: "AMD Radeon Pro 5500M", Family: "mac2"}, nil)
	b, reason, err = backends.Open(backends.Auto, backends.Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Contains(t, reason, "AMD Radeon Pro 5500M is not an Apple GPU")
	require.True(t, fm.closed)
	b, _, err = backends.Open(backends.Metal, backends.Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "metal", b.Name())
}

// backends.Metal refuses any GPU index but 0.
func TestMetalGPUIndex(t *testing.T) {
	swap(t, "darwin", nil, metal.Info{Name: "Apple M2", Family: "apple8"}, nil)
	_, _, err := backends.Open(backends.Metal, backends.Options{GPU: 1})
	require.EqualError(t, err, "metal: --gpu 1: Metal runs on the system GPU; --gpu chooses a CUDA device")
}

// Register wires backends.Metal then CUDA before the CPU, once; Here names the
// GPUs whose hardware is here without opening them.
func TestRegister(t *testing.T) {
	Register()
	Register()
	require.Equal(t, []string{"auto", "metal", "cuda", "cpu"}, backends.Names())

	oldCUDA := cudaHere
	t.Cleanup(func() { cudaHere = oldCUDA })
	cudaHere = func() bool { return true }
	swap(t, "linux", nil, metal.Info{}, errors.New("not opened"))
	require.Equal(t, []string{"cuda", "cpu"}, backends.Here(), "an NVIDIA machine")
	cudaHere = func() bool { return false }
	require.Equal(t, []string{"cpu"}, backends.Here())
	swap(t, "darwin", nil, metal.Info{}, errors.New("not opened"))
	goarch = "arm64"
	require.Equal(t, []string{"metal", "cpu"}, backends.Here(), "Apple silicon")
	goarch = "amd64"
	require.Equal(t, []string{"cpu"}, backends.Here(), "an Intel Mac: auto keeps to the CPU")
	swap(t, "darwin", []plan.Kernel{plan.Attention}, metal.Info{}, errors.New("not opened"))
	goarch = "arm64"
	require.Equal(t, []string{"cpu"}, backends.Here(), "kernels missing in MSL")
}

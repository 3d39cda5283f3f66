package backends

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
	b, reason, err := Open("", Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Empty(t, reason)
	b, _, err = Open("CPU", Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	_, _, err = Open("metal", Options{Threads: 1})
	require.Error(t, err)
	_, _, err = Open("vulkan", Options{Threads: 1})
	require.EqualError(t, err, `unknown backend "vulkan" (want `+strings.Join(Names(), ", ")+`)`)
	require.Equal(t, []string{"auto", "metal", "cuda", "cpu"}, Names()[:4])
}

// A driver added to the list is tried by auto before the CPU and opened
// by name; restoring the list removes it.
func TestReplaceAddsADriver(t *testing.T) {
	fake := &fakeMetal{}
	restore := Replace(Driver{Name: "gpu9", Open: func(Options, bool) (Backend, error) { return fake, nil }})
	require.Contains(t, Names(), "gpu9")
	b, reason, err := Open("", Options{Threads: 1})
	require.NoError(t, err)
	require.Same(t, fake, b)
	require.Empty(t, reason)
	b, _, err = Open("GPU9", Options{Threads: 1})
	require.NoError(t, err)
	require.Same(t, fake, b)
	restore()
	require.NotContains(t, Names(), "gpu9")
	b, _, err = Open("", Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
}

func TestAutoOnAMac(t *testing.T) {
	apple := metal.Info{Name: "Apple M2", Family: "apple8"}

	fm := swap(t, "darwin", nil, apple, nil)
	b, reason, err := Open(Auto, Options{Threads: 0})
	require.NoError(t, err)
	require.Equal(t, "metal", b.Name())
	require.Empty(t, reason)
	require.False(t, fm.closed)

	// Kernels still missing: the CPU, saying which.
	swap(t, "darwin", []plan.Kernel{plan.Attention, plan.Sample}, apple, nil)
	b, reason, err = Open(Auto, Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Equal(t, "using the CPU: metal: no MSL kernel yet for attention, sample", reason)
	_, _, err = Open(Metal, Options{Threads: 1})
	require.ErrorContains(t, err, "no MSL kernel yet for attention, sample")

	// Metal fails to start: the CPU with Metal's message.
	swap(t, "darwin", nil, apple, errors.New("metal: compiling the shader library: program_source:12: error"))
	b, reason, err = Open(Auto, Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Contains(t, reason, "program_source:12: error")

	// An Intel Mac's GPU: the CPU by default, Metal when asked.
	fm = swap(t, "darwin", nil, metal.Info{Name: "AMD Radeon Pro 5500M", Family: "mac2"}, nil)
	b, reason, err = Open(Auto, Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "cpu", name(t, b))
	require.Contains(t, reason, "AMD Radeon Pro 5500M is not an Apple GPU")
	require.True(t, fm.closed)
	b, _, err = Open(Metal, Options{Threads: 1})
	require.NoError(t, err)
	require.Equal(t, "metal", b.Name())
}

// The GPU index reaches the driver; a negative one is refused before any
// driver runs, and Metal refuses any index but 0.
func TestGPUIndex(t *testing.T) {
	got := -1
	restore := Replace(Driver{Name: "gpu9", Open: func(o Options, _ bool) (Backend, error) { got = o.GPU; return &fakeMetal{}, nil }})
	defer restore()
	_, _, err := Open("gpu9", Options{GPU: 3})
	require.NoError(t, err)
	require.Equal(t, 3, got)
	got = -1
	_, _, err = Open("gpu9", Options{GPU: -1})
	require.EqualError(t, err, "--gpu -1: a GPU index is 0 or more")
	require.Equal(t, -1, got)

	swap(t, "darwin", nil, metal.Info{Name: "Apple M2", Family: "apple8"}, nil)
	_, _, err = Open(Metal, Options{GPU: 1})
	require.EqualError(t, err, "metal: --gpu 1: Metal runs on the system GPU; --gpu chooses a CUDA device")
}

// GPU names the GPU driver auto would take (none here), and closes it.
func TestGPU(t *testing.T) {
	require.Equal(t, "", GPU(), "this machine has no GPU backend")
	fake := &fakeMetal{}
	restore := Replace(Driver{Name: "gpu9", Open: func(Options, bool) (Backend, error) { return fake, nil }})
	defer restore()
	require.Equal(t, "gpu9", GPU())
	require.True(t, fake.closed, "the probe's backend is closed")
}

package backends

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

type fakeGPU struct{ closed bool }

func (f *fakeGPU) Name() string                             { return "gpu9" }
func (f *fakeGPU) Load(*plan.Plan) (plan.Executable, error) { return nil, errors.New("fake") }
func (f *fakeGPU) Close()                                   { f.closed = true }

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
	require.Equal(t, []string{"auto", "cpu"}, Names(), "the GPU drivers are registered from above (package drivers)")
}

// Register puts drivers before the CPU in the order they come; Here lists
// those whose hardware is here, the CPU last.
func TestRegisterAndHere(t *testing.T) {
	defer func(old []Driver) { list = old }(list)
	open := func(Options, bool) (Backend, error) { return &fakeGPU{}, nil }
	Register(Driver{Name: "gpu9", Open: open, Here: func() bool { return false }})
	Register(Driver{Name: "gpu10", Open: open, Here: func() bool { return true }})
	require.Equal(t, []string{"auto", "gpu9", "gpu10", "cpu"}, Names())
	require.Equal(t, []string{"gpu10", "cpu"}, Here())
	require.Panics(t, func() { Register(Driver{Name: "gpu9", Open: open}) })
}

// A driver added to the list is tried by auto before the CPU and opened
// by name; restoring the list removes it.
func TestReplaceAddsADriver(t *testing.T) {
	fake := &fakeGPU{}
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

// The GPU index reaches the driver; a negative one is refused before any
// driver runs.
func TestGPUIndex(t *testing.T) {
	got := -1
	restore := Replace(Driver{Name: "gpu9", Open: func(o Options, _ bool) (Backend, error) { got = o.GPU; return &fakeGPU{}, nil }})
	defer restore()
	_, _, err := Open("gpu9", Options{GPU: 3})
	require.NoError(t, err)
	require.Equal(t, 3, got)
	got = -1
	_, _, err = Open("gpu9", Options{GPU: -1})
	require.EqualError(t, err, "--gpu -1: a GPU index is 0 or more")
	require.Equal(t, -1, got)
}

// GPU names the GPU driver auto would take (none here), and closes it.
func TestGPU(t *testing.T) {
	require.Equal(t, "", GPU(), "this machine has no GPU backend")
	fake := &fakeGPU{}
	restore := Replace(Driver{Name: "gpu9", Open: func(Options, bool) (Backend, error) { return fake, nil }})
	defer restore()
	require.Equal(t, "gpu9", GPU())
	require.True(t, fake.closed, "the probe's backend is closed")
}

package cuda

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The first load of the PTX on a GPU tells the user, once, that the
// kernels are being compiled and then how long opening took; later opens
// of the same GPU say nothing (unless asked for the times), another GPU
// model is told again, and without a Notice writer no mark is kept. A GPU
// the committed cubins cover compiles nothing and is told nothing.
func TestFakeJITNoticeOnce(t *testing.T) {
	f := withFake(t, 90)
	marks := t.TempDir()
	open := func(o Options, jit bool) string {
		var out bytes.Buffer
		o.Notice, o.JITMarks = &out, marks
		b, err := New(o)
		require.NoError(t, err)
		require.Equal(t, jit, b.Info().ModuleFromJIT)
		b.Close()
		return out.String()
	}
	if b, _ := cubinFor("kernels", 90); b != nil {
		require.Empty(t, open(Options{}, false), "a cubin: nothing to prepare")
	}
	t.Setenv("HARK_CUDA_JIT", "1") // the PTX, as on a GPU no cubin covers
	first := open(Options{}, true)
	require.Contains(t, first, "hark: preparing the GPU kernels for Fake GPU (sm_90), once:")
	require.Regexp(t, `hark: GPU kernels ready \(driver start \d+\.\d\d s, context \d+\.\d\d s, kernels \d+\.\d\d s\)`, first)
	ents, err := os.ReadDir(marks)
	require.NoError(t, err)
	require.Len(t, ents, 1)

	require.Empty(t, open(Options{}, true), "the same GPU is told once")
	times := open(Options{ReportStartup: true}, true)
	require.NotContains(t, times, "preparing")
	require.Contains(t, times, "hark: GPU kernels ready (driver start")

	f.compute = 80
	require.Contains(t, open(Options{}, true), "for Fake GPU (sm_80), once:", "another GPU model compiles its own")

	quiet := t.TempDir()
	b, err := New(Options{JITMarks: quiet})
	require.NoError(t, err)
	require.Positive(t, b.Info().Startup.Context)
	require.Positive(t, b.Info().Startup.Kernels)
	b.Close()
	ents, err = os.ReadDir(quiet)
	require.NoError(t, err)
	require.Empty(t, ents, "no mark without anyone to tell")
}

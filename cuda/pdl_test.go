package cuda

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// overlaps lists, for each launch of ls, whether it was made to overlap
// the kernel before it.
func overlaps(ls []fakeLaunch) []bool {
	out := make([]bool, len(ls))
	for i, l := range ls {
		out[i] = l.overlapped
	}
	return out
}

// On a 9.0 GPU whose kernels come from PTX, every module is loaded in its
// PDL form and a kernel that follows a kernel of the same batch is
// launched to overlap it; the first launch of a batch, and one after a
// function constant's store, are plain (constantsPlan: the constants
// before the first mat-vec, the alignment flag before the fourth). A
// recorded graph keeps the same launches. No overlap where the GPU is
// older, the driver lacks cuLaunchKernelEx, or NoPDL or Profile is set.
func TestFakePDLLaunches(t *testing.T) {
	t.Setenv("HARK_CUDA_JIT", "1")
	run := func(t *testing.T, f *fakeGPU, o Options, runs int) (*Backend, []fakeLaunch) {
		b, err := New(o)
		require.NoError(t, err)
		t.Cleanup(b.Close)
		ex, err := b.Load(constantsPlan())
		require.NoError(t, err)
		t.Cleanup(func() { ex.Close() })
		n := len(f.launches)
		for range runs {
			require.NoError(t, ex.Run(0, &plan.Vars{}))
		}
		return b, f.launches[n:]
	}
	want := []bool{false, true, true, false}

	f := withFake(t, 90)
	b, ls := run(t, f, Options{NoGraphs: true}, 2)
	require.Equal(t, 3, f.pdlImages, "the base module and both native modules in their PDL form")
	require.True(t, b.Info().PDL)
	require.Contains(t, b.Info().String(), "kernels from PTX JIT (PDL)")
	require.Equal(t, append(append([]bool{}, want...), want...), overlaps(ls), "each batch starts plainly")
	require.Equal(t, 4, b.Stats().Overlapped)

	f = withFake(t, 90)
	b, ls = run(t, f, Options{}, 3) // launched, then launched and recorded, then replayed
	require.Equal(t, append(append(append([]bool{}, want...), want...), want...), overlaps(ls))
	require.True(t, ls[8].replayed)
	require.Len(t, f.execs, 1)
	for _, g := range f.execs {
		var rec []fakeLaunch
		for _, w := range g {
			if w.launch != nil {
				rec = append(rec, *w.launch)
			}
		}
		require.Equal(t, want, overlaps(rec), "the graph's launches")
	}
	require.Equal(t, 1, b.Stats().GraphLaunches)

	for name, tc := range map[string]struct {
		compute int32
		o       Options
		noEx    bool
		images  int
	}{
		"sm_80":               {80, Options{NoGraphs: true}, false, 0},
		"NoPDL":               {90, Options{NoGraphs: true, NoPDL: true}, false, 3},
		"Profile":             {90, Options{Profile: true}, false, 3},
		"no cuLaunchKernelEx": {90, Options{NoGraphs: true}, true, 3},
	} {
		f := withFake(t, tc.compute)
		f.noEx = tc.noEx
		b, ls := run(t, f, tc.o, 1)
		require.Equal(t, tc.images, f.pdlImages, name)
		require.Equal(t, []bool{false, false, false, false}, overlaps(ls), name)
		require.Zero(t, b.Stats().Overlapped, name)
		require.Equal(t, tc.images > 0 && !tc.noEx, b.Info().PDL, name)
	}
}

// Cubins overlap only when SOURCE says they were made from the PDL form
// ("pdl" after the module's hash), and only on 9.0 and newer.
func TestFakePDLCubins(t *testing.T) {
	t.Setenv("HARK_CUDA_CUBIN_CACHE", "off")
	image := []byte("\x7fELF stands in for ptxas output")
	for _, tc := range []struct {
		source  string
		compute int32
		pdl     bool
	}{{"", 90, false}, {" pdl", 90, true}, {" pdl", 80, false}} {
		dir := t.TempDir()
		src := "kernels " + moduleHash("kernels") + tc.source + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "SOURCE"), []byte(src), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "kernels."+archOf("kernels", int(tc.compute))+".cubin.xz"), xzOf(t, image).Bytes(), 0o644))
		t.Setenv("HARK_CUDA_CUBIN_DIR", dir)
		f := withFake(t, tc.compute)
		b, err := New(Options{NoGraphs: true, NoNative: true})
		require.NoError(t, err)
		require.False(t, b.Info().ModuleFromJIT, "%q", tc.source)
		require.Zero(t, f.pdlImages)
		require.Equal(t, tc.pdl, b.dev.modPDL, "SOURCE %q on %d", tc.source, tc.compute)
		require.Equal(t, tc.pdl, b.Info().PDL)
		ex, err := b.Load(constantsPlan())
		require.NoError(t, err)
		require.NoError(t, ex.Run(0, &plan.Vars{}))
		require.Equal(t, []bool{false, tc.pdl, tc.pdl, false}, overlaps(f.launches[len(f.launches)-4:]))
		ex.Close()
		b.Close()
	}
}

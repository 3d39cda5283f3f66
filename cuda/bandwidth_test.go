package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// On the fake (a quarter of a millisecond between two new events): 3
// untimed warm-up copies, then 10 timed ones; bytes read plus written over
// the mean time; the buffers and events are freed, and a failing copy is
// an error naming the call.
func TestFakeCopyBandwidth(t *testing.T) {
	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	defer b.Close()
	const n = 1 << 20
	bw, err := b.CopyBandwidth(n, 3, 10)
	require.NoError(t, err)
	require.InDelta(t, 2*float64(n)/0.25e-3, bw, 1)
	require.Equal(t, 13, f.count_("cuMemcpyDtoDAsync"))
	require.Equal(t, 20, f.count_("cuEventRecord"), "a start and an end per timed copy")
	require.Equal(t, 10, f.count_("cuEventElapsedTime"))
	require.Equal(t, 2, f.count_("cuEventDestroy"))
	require.Equal(t, 2, f.count_("cuMemFree"))

	f.fail["cuMemcpyDtoDAsync"] = 1
	_, err = b.CopyBandwidth(n, 3, 10)
	require.ErrorContains(t, err, "cuMemcpyDtoDAsync: CUDA_ERROR_FAKE")
	require.Equal(t, 4, f.count_("cuMemFree"), "freed on failure too")
	_, err = b.CopyBandwidth(0, 3, 10)
	require.ErrorContains(t, err, "bad size")
}

// On a GPU: a 1 GiB copy runs at a plausible rate (an H200 copies about
// 4.3 TB/s counted so; any real GPU is between 10 GB/s and 20 TB/s).
func TestGPUCopyBandwidth(t *testing.T) {
	b := gpuWith(t, Options{})
	bw, err := b.CopyBandwidth(1<<30, 3, 10)
	require.NoError(t, err)
	t.Logf("%s: device-to-device copy %.1f GB/s", b.Info().Name, bw/1e9)
	require.Greater(t, bw, 10e9)
	require.Less(t, bw, 20e12)
}

package metal

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

func accessOf(t *testing.T, d plan.Dispatch, sizes []uint64) map[int]access {
	t.Helper()
	acc := accesses(&d, sizes, nil)
	out := map[int]access{}
	for _, a := range acc {
		out[int(a.buf)] = a
	}
	return out
}

var big = []uint64{1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30}

// Extents worked out by hand from the kernel contract.
func TestAccessExtents(t *testing.T) {
	// Qwen3's per-head Q norm inside a fused QKV row: 2 tokens × 4 heads
	// of 8, rows grouped by 4 in rows of 64.
	d := plan.RMSNormArgs{X: plan.Binding{Buf: 0, Off: 16}, W: plan.Binding{Buf: 1}, Out: plan.Binding{Buf: 2, Off: 16},
		Dim: 8, Rows: 8, Ldx: 64, Ldo: 64, Inner: 4}.Dispatch()
	a := accessOf(t, d, big)
	require.Equal(t, access{buf: 0, lo: 16, hi: 16 + 96*4, touched: 256, read: true}, a[0])
	require.Equal(t, access{buf: 2, lo: 16, hi: 16 + 96*4, touched: 256, write: true}, a[2])
	require.Equal(t, access{buf: 1, lo: 0, hi: 32, touched: 32, read: true}, a[1])

	// RopeKV into an f16 cache: 3 tokens at positions 5..7, 2 KV heads of
	// 8 with 100 positions per head.
	d = plan.RopeKVArgs{Type: ggml.F16, QKV: plan.Binding{Buf: 0}, Freqs: plan.None, KCache: plan.Binding{Buf: 2, Off: 4096}, VCache: plan.Binding{Buf: 3},
		HeadDim: 8, NHead: 4, NKV: 2, M: 3, Ldqkv: 64, Pos0: 5, RopeDim: 8, HeadStride: 800, PosStride: 8}.Dispatch()
	a = accessOf(t, d, big)
	require.Equal(t, access{buf: 2, lo: 4096 + 80, hi: 4096 + 1728, touched: 96, write: true}, a[2])
	require.Equal(t, access{buf: 3, lo: 80, hi: 1728, touched: 96, write: true}, a[3])
	require.Equal(t, access{buf: 0, lo: 0, hi: (2*64 + 64) * 4, touched: 3 * 64 * 4, read: true, write: true}, a[0])

	// Attention over 5 beams (one sequence per row), f32 cache.
	d = plan.AttentionArgs{Type: ggml.F32, Q: plan.Binding{Buf: 0}, K: plan.Binding{Buf: 1}, V: plan.Binding{Buf: 2}, Out: plan.Binding{Buf: 3}, Probs: plan.None,
		HeadDim: 8, NHead: 4, NKV: 2, M: 5, Ldq: 64, Ldo: 32, KVLen: 10, Pos0: 9, Flags: plan.FlagPerSeqRows,
		HeadStride: 800, PosStride: 8, SeqStride: 1600}.Dispatch()
	a = accessOf(t, d, big)
	require.Equal(t, access{buf: 1, lo: 0, hi: 29120, touched: 3200, read: true}, a[1])
	require.Equal(t, access{buf: 3, lo: 0, hi: (4*32 + 32) * 4, touched: 5 * 32 * 4, write: true}, a[3])

	// Whisper's first convolution over the channel-major mel.
	d = plan.Conv1DArgs{Type: ggml.F16, W: plan.Binding{Buf: 0}, X: plan.Binding{Buf: 1}, Bias: plan.Binding{Buf: 2}, Out: plan.Binding{Buf: 3},
		Cin: 80, Cout: 384, T: 3000, Kw: 3, Stride: 1, Pad: 1, Flags: plan.FlagChannelMaj, Ldx: 3000, Ldo: 384}.Dispatch()
	a = accessOf(t, d, big)
	require.Equal(t, uint64(384*480), a[0].hi)
	require.Equal(t, uint64(960000), a[1].hi)
	require.Equal(t, uint64(4608000), a[3].hi)
	require.True(t, a[3].write && !a[3].read)

	// Hostile parameters saturate rather than wrap, so the bounds check
	// catches them.
	const huge = 1<<32 - 1
	d = plan.MatVecArgs{Type: ggml.F32, W: plan.Binding{Buf: 0}, X: plan.Binding{Buf: 1}, Out: plan.Binding{Buf: 2}, Bias: plan.None, Res: plan.None,
		N: huge, K: huge, M: huge, Ldx: huge, Ldo: huge}.Dispatch()
	a = accessOf(t, d, big)
	for _, b := range []int{0, 1, 2} {
		require.Greater(t, a[b].hi, uint64(1<<60), "binding %d", b)
	}
}

// The barrier decisions of the hazard tracker.
func TestHazards(t *testing.T) {
	var h hazards
	w := func(buf plan.BufID, lo, hi uint64) access { return access{buf: buf, lo: lo, hi: hi, write: true} }
	r := func(buf plan.BufID, lo, hi uint64) access { return access{buf: buf, lo: lo, hi: hi, read: true} }
	require.False(t, h.add([]access{r(0, 0, 100), w(1, 0, 100)}))
	require.False(t, h.add([]access{r(0, 0, 100), w(1, 100, 200)}), "disjoint writes, shared reads")
	require.True(t, h.add([]access{r(1, 50, 60)}), "read after write")
	require.False(t, h.add([]access{r(1, 0, 200)}), "the barrier cleared the earlier writes")
	require.True(t, h.add([]access{w(1, 199, 200)}), "write after read")
	require.False(t, h.add([]access{w(2, 0, 8)}))
	require.True(t, h.add([]access{w(2, 4, 12)}), "write after write")
}

package plan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

func spansOf(t *testing.T, d plan.Dispatch, sizes []uint64) map[int]plan.Span {
	t.Helper()
	acc := d.Spans(sizes, nil)
	out := map[int]plan.Span{}
	for _, a := range acc {
		out[int(a.Buf)] = a
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
	a := spansOf(t, d, big)
	require.Equal(t, plan.Span{Buf: 0, Lo: 16, Hi: 16 + 96*4, Touched: 256, Read: true}, a[0])
	require.Equal(t, plan.Span{Buf: 2, Lo: 16, Hi: 16 + 96*4, Touched: 256, Write: true}, a[2])
	require.Equal(t, plan.Span{Buf: 1, Lo: 0, Hi: 32, Touched: 32, Read: true}, a[1])

	// RopeKV into an f16 cache: 3 tokens at positions 5..7, 2 KV heads of
	// 8 with 100 positions per head.
	d = plan.RopeKVArgs{Type: ggml.F16, QKV: plan.Binding{Buf: 0}, Freqs: plan.None, KCache: plan.Binding{Buf: 2, Off: 4096}, VCache: plan.Binding{Buf: 3},
		HeadDim: 8, NHead: 4, NKV: 2, M: 3, Ldqkv: 64, Pos0: 5, RopeDim: 8, HeadStride: 800, PosStride: 8}.Dispatch()
	a = spansOf(t, d, big)
	require.Equal(t, plan.Span{Buf: 2, Lo: 4096 + 80, Hi: 4096 + 1728, Touched: 96, Write: true}, a[2])
	require.Equal(t, plan.Span{Buf: 3, Lo: 80, Hi: 1728, Touched: 96, Write: true}, a[3])
	require.Equal(t, plan.Span{Buf: 0, Lo: 0, Hi: (2*64 + 64) * 4, Touched: 3 * 64 * 4, Read: true, Write: true}, a[0])

	// Attention over 5 beams (one sequence per row), f32 cache.
	d = plan.AttentionArgs{Type: ggml.F32, Q: plan.Binding{Buf: 0}, K: plan.Binding{Buf: 1}, V: plan.Binding{Buf: 2}, Out: plan.Binding{Buf: 3}, Probs: plan.None,
		HeadDim: 8, NHead: 4, NKV: 2, M: 5, Ldq: 64, Ldo: 32, KVLen: 10, Pos0: 9, Flags: plan.FlagPerSeqRows,
		HeadStride: 800, PosStride: 8, SeqStride: 1600}.Dispatch()
	a = spansOf(t, d, big)
	require.Equal(t, plan.Span{Buf: 1, Lo: 0, Hi: 29120, Touched: 3200, Read: true}, a[1])
	require.Equal(t, plan.Span{Buf: 3, Lo: 0, Hi: (4*32 + 32) * 4, Touched: 5 * 32 * 4, Write: true}, a[3])

	// Whisper's first convolution over the channel-major mel.
	d = plan.Conv1DArgs{Type: ggml.F16, W: plan.Binding{Buf: 0}, X: plan.Binding{Buf: 1}, Bias: plan.Binding{Buf: 2}, Out: plan.Binding{Buf: 3},
		Cin: 80, Cout: 384, T: 3000, Kw: 3, Stride: 1, Pad: 1, Flags: plan.FlagChannelMaj, Ldx: 3000, Ldo: 384}.Dispatch()
	a = spansOf(t, d, big)
	require.Equal(t, uint64(384*480), a[0].Hi)
	require.Equal(t, uint64(960000), a[1].Hi)
	require.Equal(t, uint64(4608000), a[3].Hi)
	require.True(t, a[3].Write && !a[3].Read)

	// Hostile parameters saturate rather than wrap, so the bounds check
	// catches them.
	const huge = 1<<32 - 1
	d = plan.MatVecArgs{Type: ggml.F32, W: plan.Binding{Buf: 0}, X: plan.Binding{Buf: 1}, Out: plan.Binding{Buf: 2}, Bias: plan.None, Res: plan.None,
		N: huge, K: huge, M: huge, Ldx: huge, Ldo: huge}.Dispatch()
	a = spansOf(t, d, big)
	for _, b := range []int{0, 1, 2} {
		require.Greater(t, a[b].Hi, uint64(1<<60), "binding %d", b)
	}
}

// The wait decisions of the hazard tracker.
func TestHazards(t *testing.T) {
	var h plan.Hazards
	w := func(buf plan.BufID, lo, hi uint64) plan.Span { return plan.Span{Buf: buf, Lo: lo, Hi: hi, Write: true} }
	r := func(buf plan.BufID, lo, hi uint64) plan.Span { return plan.Span{Buf: buf, Lo: lo, Hi: hi, Read: true} }
	require.False(t, h.Add([]plan.Span{r(0, 0, 100), w(1, 0, 100)}))
	require.False(t, h.Add([]plan.Span{r(0, 0, 100), w(1, 100, 200)}), "disjoint writes, shared reads")
	require.True(t, h.Add([]plan.Span{r(1, 50, 60)}), "read after write")
	require.False(t, h.Add([]plan.Span{r(1, 0, 200)}), "the barrier cleared the earlier writes")
	require.True(t, h.Add([]plan.Span{w(1, 199, 200)}), "write after read")
	require.False(t, h.Add([]plan.Span{w(2, 0, 8)}))
	require.True(t, h.Add([]plan.Span{w(2, 4, 12)}), "write after write")
	h.Reset()
	require.False(t, h.Add([]plan.Span{w(2, 4, 12)}), "a wait placed by the caller clears everything")
	require.True(t, h.Add([]plan.Span{r(2, 0, plan.ToEnd)}), "a span to the end overlaps all after its start")
}

// A table read to its end: without sizes the span stays open (ToEnd), with
// them it ends at the buffer's end.
func TestSpansToEnd(t *testing.T) {
	d := plan.EmbedArgs{Add: plan.None, Type: ggml.F32, Table: plan.Binding{Buf: 0, Off: 64}, Ids: plan.Binding{Buf: 1}, Out: plan.Binding{Buf: 2}, Dim: 8, N: 2, Ldo: 8}.Dispatch()
	open := spansOf(t, d, nil)
	require.Equal(t, uint64(64), open[0].Lo)
	require.Equal(t, plan.ToEnd, open[0].Hi)
	require.True(t, open[0].Read && !open[0].Write)
	sized := spansOf(t, d, []uint64{4096, 8, 64})
	require.Equal(t, uint64(4096), sized[0].Hi)
	require.Equal(t, plan.Span{Buf: 2, Lo: 0, Hi: 64, Touched: 64, Write: true}, sized[2])
	// a table buffer smaller than the offset gives an empty span, not a wrap
	require.Equal(t, uint64(64), spansOf(t, d, []uint64{16, 8, 64})[0].Hi)
}

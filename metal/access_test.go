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
	d := plan.Dispatch{Kernel: plan.RMSNorm}
	d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: 0, Off: 16}, plan.Binding{Buf: 1}, plan.Binding{Buf: 2, Off: 16})
	d.P[0], d.P[1], d.P[2], d.P[3], d.P[5] = 8, 8, 64, 64, 4
	a := accessOf(t, d, big)
	require.Equal(t, access{buf: 0, lo: 16, hi: 16 + 96*4, touched: 256, read: true}, a[0])
	require.Equal(t, access{buf: 2, lo: 16, hi: 16 + 96*4, touched: 256, write: true}, a[2])
	require.Equal(t, access{buf: 1, lo: 0, hi: 32, touched: 32, read: true}, a[1])

	// RopeKV into an f16 cache: 3 tokens at positions 5..7, 2 KV heads of
	// 8 with 100 positions per head.
	d = plan.Dispatch{Kernel: plan.RopeKV, Type: ggml.F16}
	d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: 0}, plan.None, plan.Binding{Buf: 2, Off: 4096}, plan.Binding{Buf: 3})
	d.P = [plan.MaxParams]uint32{8, 4, 2, 3, 64, 5, 0, 8, 800, 8, 0, 0}
	a = accessOf(t, d, big)
	require.Equal(t, access{buf: 2, lo: 4096 + 80, hi: 4096 + 1728, touched: 96, write: true}, a[2])
	require.Equal(t, access{buf: 3, lo: 80, hi: 1728, touched: 96, write: true}, a[3])
	require.Equal(t, access{buf: 0, lo: 0, hi: (2*64 + 64) * 4, touched: 3 * 64 * 4, read: true, write: true}, a[0])

	// Attention over 5 beams (one sequence per row), f32 cache.
	d = plan.Dispatch{Kernel: plan.Attention, Type: ggml.F32}
	d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: 0}, plan.Binding{Buf: 1}, plan.Binding{Buf: 2}, plan.Binding{Buf: 3}, plan.None)
	d.P = [plan.MaxParams]uint32{8, 4, 2, 5, 64, 32, 10, 9, plan.FlagPerSeqRows, 0, 800, 8, 1600, 0}
	a = accessOf(t, d, big)
	require.Equal(t, access{buf: 1, lo: 0, hi: 29120, touched: 3200, read: true}, a[1])
	require.Equal(t, access{buf: 3, lo: 0, hi: (4*32 + 32) * 4, touched: 5 * 32 * 4, write: true}, a[3])

	// Whisper's first convolution over the channel-major mel.
	d = plan.Dispatch{Kernel: plan.Conv1D, Type: ggml.F16}
	d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: 0}, plan.Binding{Buf: 1}, plan.Binding{Buf: 2}, plan.Binding{Buf: 3})
	d.P = [plan.MaxParams]uint32{80, 384, 3000, 3, 1, 1, plan.FlagChannelMaj, 3000, 384}
	a = accessOf(t, d, big)
	require.Equal(t, uint64(384*480), a[0].hi)
	require.Equal(t, uint64(960000), a[1].hi)
	require.Equal(t, uint64(4608000), a[3].hi)
	require.True(t, a[3].write && !a[3].read)

	// Hostile parameters saturate rather than wrap, so the bounds check
	// catches them.
	d = plan.Dispatch{Kernel: plan.MatVec, Type: ggml.F32}
	d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: 0}, plan.Binding{Buf: 1}, plan.Binding{Buf: 2})
	d.P[0], d.P[1], d.P[2], d.P[3], d.P[4] = 1<<32-1, 1<<32-1, 1<<32-1, 1<<32-1, 1<<32-1
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

package cpu

import (
	"testing"

	"github.com/harkapp/hark/engine/plan"
	"github.com/stretchr/testify/require"
)

// A pass gives back the pages it alone touches: not those another pass
// touches (even one byte of a page), nor those of a buffer whose bytes
// outlive a pass (the host's, one a pass reads before writing it), and
// nothing where the rest is under dropMin.
func TestArenaDrops(t *testing.T) {
	const page = 4096
	defer func(v int64) { dropMin = v }(dropMin)
	dropMin = 2 * page
	bufs := []plan.Buffer{
		{Name: "big", Kind: plan.Scratch, Size: 8 * page},
		{Name: "row", Kind: plan.Scratch, Size: 2 * page},
		{Name: "host", Kind: plan.Scratch, Size: 100},
		{Name: "carried", Kind: plan.Scratch, Size: page},
		{Name: "state", Kind: plan.State, Size: page},
	}
	offs := []int64{0, 8 * page, 10*page + 64, 11 * page, -1}
	uses := [][]*use{
		// the prefill: big and row whole, carried read first
		{{lo: 0, hi: 8 * page}, {lo: 0, hi: 2 * page}, nil, {lo: 0, hi: page, carried: true}, nil},
		// decode: one byte of big's fourth page, row's first 10 bytes
		{{lo: 3*page + 5, hi: 3*page + 6}, {lo: 0, hi: 10}, nil, nil, nil},
	}
	drops := arenaDrops(bufs, uses, offs, page)
	require.Equal(t, [][2]int64{{0, 3 * page}, {4 * page, 8 * page}, {9 * page, 10 * page}}, drops[0])
	require.Nil(t, drops[1], "decode touches nothing the prefill does not")

	// the host's buffer shares row's last page: that page stays
	offs[2] = 10*page - 64
	drops = arenaDrops(bufs, uses, offs, page)
	require.Equal(t, [][2]int64{{0, 3 * page}, {4 * page, 8 * page}}, drops[0])

	// under dropMin: kept
	dropMin = 8 * page
	require.Nil(t, arenaDrops(bufs, uses, offs, page)[0])
}

// A buffer a pass reads at its first binding is carried: its bytes come
// from before the pass.
func TestPassUsesCarried(t *testing.T) {
	bufs := []plan.Buffer{
		{Name: "a", Kind: plan.Scratch, Size: 64 * 4},
		{Name: "b", Kind: plan.Scratch, Size: 64 * 4},
		{Name: "c", Kind: plan.Scratch, Size: 64 * 4},
	}
	f32 := func(b plan.BufID) plan.Binding { return plan.F32At(b, 0) }
	ops := [][]plan.Dispatch{{
		plan.ScaleArgs{X: f32(0), Out: f32(1), N: 64, M: 1, Ldx: 64, Ldo: 64, Scale: 2}.Dispatch(), // reads a first
		plan.ScaleArgs{X: f32(1), Out: f32(2), N: 64, M: 1, Ldx: 64, Ldo: 64, Scale: 2}.Dispatch(), // b written before
	}}
	sizes := bufSizes(bufs)
	uses := passUses(bufs, ops, func(p, i int, dst []plan.Span) []plan.Span { return scratchSpans(&ops[p][i], bufs, sizes, dst) })
	require.True(t, uses[0][0].carried)
	require.False(t, uses[0][1].carried)
	require.False(t, uses[0][2].carried)
}

package cpu

import (
	"testing"

	"github.com/harkapp/hark/engine/plan"
	"github.com/stretchr/testify/require"
)

// Two Scratch buffers needed at different times share the arena's bytes,
// one needed beside them does not, and the fences see the shared bytes:
// the dispatch that writes b must wait for the one still reading a in
// the same bytes, which their names alone would not order.
func TestArenaSharesAndFences(t *testing.T) {
	const n = 64
	p := &plan.Plan{Name: "arena"}
	in := p.AddBuffer(plan.Buffer{Name: "in", Kind: plan.IO, Size: 4 * n})
	out := p.AddBuffer(plan.Buffer{Name: "out", Kind: plan.IO, Size: 4 * n})
	a := p.AddBuffer(plan.Buffer{Name: "a", Kind: plan.Scratch, Size: 4 * n})
	b := p.AddBuffer(plan.Buffer{Name: "b", Kind: plan.Scratch, Size: 4 * n})
	keep := p.AddBuffer(plan.Buffer{Name: "keep", Kind: plan.Scratch, Size: 4 * n})
	ps, _ := p.AddPass("p")
	scale := func(x, o plan.BufID) {
		ps.Add(plan.ScaleArgs{X: plan.F32At(x, 0), Out: plan.F32At(o, 0), N: n, M: 1, Ldx: n, Ldo: n, Scale: 2}.Dispatch())
	}
	scale(in, keep) // 0: keep lives to the end
	scale(in, a)    // 1: a = 2·in
	scale(a, out)   // 2: reads a (its last use)
	scale(in, b)    // 3: b = 2·in, in a's bytes
	scale(b, out)   // 4
	scale(keep, out)
	require.NoError(t, p.Validate())

	offs, span, touched, runs, _ := scratchLayout(p.Buffers, [][]plan.Dispatch{ps.Ops}, func(*plan.Dispatch) bool { return true }, 64)
	require.Empty(t, runs[0])
	require.Equal(t, offs[a], offs[b], "a and b share bytes")
	require.NotEqual(t, offs[a], offs[keep])
	require.Equal(t, int64(2*arenaAlign*((4*n+arenaAlign-1)/arenaAlign)), span)
	require.Equal(t, span, touched)

	places := make([]arenaPlace, len(p.Buffers))
	for i, o := range offs {
		if o >= 0 {
			places[i] = arenaPlace{in: true, off: uint64(o), size: uint64(p.Buffers[i].Size)}
		}
	}
	require.True(t, fences(ps.Ops, places)[3], "b's write waits for a's read")
	require.False(t, fences(ps.Ops, make([]arenaPlace, len(p.Buffers)))[3], "by name alone nothing orders them")

	be := New(Options{Threads: 2})
	defer be.Close()
	x, err := be.Load(p)
	require.NoError(t, err)
	defer x.Close()
	require.NoError(t, x.Write(in, 0, make([]byte, 4*n)))
	require.NoError(t, x.Run(0, nil))
}

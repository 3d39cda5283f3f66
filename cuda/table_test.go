package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// mixedPlan is patchedPlan's dispatch between two without patches: one
// reading x into z before it, one reading z into x after it.
func mixedPlan(zRows int) *plan.Plan {
	p, y := patchedPlan()
	x := plan.BufID(0)
	z := p.AddBuffer(plan.Buffer{Name: "z", Kind: plan.IO, Size: int64(zRows) * 64 * 4})
	scale := func(from, to plan.BufID) plan.Dispatch {
		d := plan.Dispatch{Kernel: plan.Scale, Grid: [3]uint32{1, 1, 1}}
		d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: from}, plan.Binding{Buf: to})
		d.P[0], d.P[1], d.P[2], d.P[3] = 64, 2, 64, 64 // two rows of 64 floats
		return d
	}
	ps := p.Passes[0]
	ops := append([]plan.Dispatch{scale(x, z)}, ps.Ops...)
	ps.Ops = append(ops, scale(z, y))
	return p
}

func loadPlan(t *testing.T, b *Backend, p *plan.Plan) *Exec {
	t.Helper()
	ex, err := b.Load(p)
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return ex.(*Exec)
}

// The launch table: dispatches without patches are worked out at load;
// a batch holds and keys only the patched one's launches; a replay builds
// no kernel parameter, and every launch (the table's and the batch's, in
// pass order) sees what the kernel-by-kernel launch of the same step
// sees. RunSeq over more steps than a batch holds runs them all, one
// batch after another.
func TestFakeLaunchTable(t *testing.T) {
	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	e := loadPlan(t, b, mixedPlan(2))
	rb, err := New(Options{NoGraphs: true})
	require.NoError(t, err)
	t.Cleanup(rb.Close)
	re := loadPlan(t, rb, mixedPlan(2))

	tab := e.table[0]
	require.Equal(t, []int{1}, tab.patched)
	require.Equal(t, -1, tab.errOp)
	require.True(t, tab.ops[0].fixed && tab.ops[2].fixed && !tab.ops[1].fixed)
	require.Len(t, tab.ops[0].recs, 1)
	require.Equal(t, "scale", tab.ops[0].recs[0].name)

	v := plan.Vars{plan.VarPos: 3, plan.VarNTok: 1}
	require.NoError(t, e.Run(0, &v))
	require.Len(t, e.batch.recs, 1, "only the patched dispatch is prepared per step")
	require.Equal(t, int32(1), e.batch.recs[0].opIdx)
	// a step's header (pass) and one launch: op, function, geometry,
	// shared, scratch, constants
	require.Len(t, e.batch.key, 8+4+8+9*4)
	require.NoError(t, re.Run(0, &v))
	require.Empty(t, re.batch.key, "no key where graphs are off")

	for pos := int64(0); pos < 6; pos++ {
		v := plan.Vars{plan.VarPos: pos, plan.VarNTok: 1}
		require.NoError(t, re.Run(0, &v))
		want := f.launches[len(f.launches)-3:]
		built := e.paramsBuilt
		require.NoError(t, e.Run(0, &v))
		got := f.launches[len(f.launches)-3:]
		replayed := pos >= 1 // Run above was the first sight, pos 0 the second (recorded)
		if replayed {
			require.Equal(t, built, e.paramsBuilt, "a replay builds no parameter")
		} else {
			require.Equal(t, built+6, e.paramsBuilt, "launched, then recorded")
		}
		for i := range got {
			require.Equal(t, replayed, got[i].replayed, "pos %d launch %d", pos, i)
			require.Equal(t, want[i].grid, got[i].grid)
			require.Equal(t, norm(re, want[i].prm), norm(e, f.effective(got[i].prm)), "pos %d launch %d", pos, i)
		}
		require.Equal(t, e.ptrs[1]+uint64(pos)*64*4, f.effective(got[1].prm).bufs[1], "the patched launch writes row %d", pos)
	}

	// RunSeq over more steps than a batch holds
	steps := make([]plan.Vars, stepRows+2)
	for i := range steps {
		steps[i] = plan.Vars{plan.VarPos: int64(i % 16), plan.VarNTok: 1}
	}
	b.ResetStats()
	n := len(f.launches)
	require.NoError(t, e.RunSeq(0, steps))
	require.Equal(t, 3*len(steps), len(f.launches)-n)
	require.Equal(t, 2, b.Stats().Syncs, "two batches")
	for i, l := range f.launches[n:] {
		if i%3 == 1 {
			require.Equal(t, e.ptrs[1]+uint64(i/3%16)*64*4, f.effective(l.prm).bufs[1], "step %d", i/3)
		}
	}
}

// A dispatch without patches that overruns its buffer fails every run of
// its pass (not the load), naming its op; a failing patched dispatch
// before it is named instead; nothing is launched either way.
func TestFakeLaunchTableErrors(t *testing.T) {
	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	e := loadPlan(t, b, mixedPlan(1)) // z holds one row, the table's dispatches use two
	require.Equal(t, 0, e.table[0].errOp)
	for range 2 {
		require.ErrorContains(t, e.Run(0, &plan.Vars{plan.VarNTok: 1}), "cuda: plan patched/main op 0 (scale)")
	}
	p := mixedPlan(1)
	p.Passes[0].Ops = p.Passes[0].Ops[1:] // the patched dispatch first, then the bad one
	e = loadPlan(t, b, p)
	require.Equal(t, 1, e.table[0].errOp)
	require.ErrorContains(t, e.Run(0, &plan.Vars{plan.VarNTok: 1}), "cuda: plan patched/main op 1 (scale)")
	require.ErrorContains(t, e.Run(0, &plan.Vars{plan.VarPos: -1, plan.VarNTok: 1}), "cuda: plan patched/main op 0 (scale): patch")
	require.Empty(t, f.launches)
}

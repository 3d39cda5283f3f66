package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// constantsPlan is four f32 mat-vecs: three with the same function
// constants, then one whose x is not 16-byte aligned (function constant
// 22 becomes 0).
func constantsPlan() *plan.Plan {
	const n, k = 4, 32
	p := &plan.Plan{Name: "consts"}
	w := p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: 4 * n * k, Data: make([]byte, 4*n*k)})
	x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: 4 * (k + 4)})
	y := p.AddBuffer(plan.Buffer{Name: "y", Kind: plan.IO, Size: 4 * n})
	ps, _ := p.AddPass("main")
	for i := range 4 {
		xb := plan.F32At(x, 0)
		if i == 3 {
			xb = plan.F32At(x, 1)
		}
		ps.Add(plan.MatVecArgs{Type: ggml.F32, W: plan.Binding{Buf: w}, X: xb, Out: plan.Binding{Buf: y},
			Bias: plan.None, Res: plan.None, N: n, K: k, M: 1, Ldx: k, Ldo: n, Ldr: n}.Dispatch())
	}
	return p
}

func (f *fakeGPU) memsets() int {
	return f.count_("cuMemsetD8Async") + f.count_("cuMemsetD16Async") + f.count_("cuMemsetD32Async")
}

// A batch stores a function constant only when its value changes: the
// mat-vecs' three constants before the first launch, the alignment flag
// again before the fourth; Options.AllConstants stores all three before
// every launch. A recorded graph stores them itself (the batch's first
// store is never skipped), so what ran before does not matter.
func TestFakeConstantsStoredOnChange(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want int
	}{{Options{NoGraphs: true}, 4}, {Options{NoGraphs: true, AllConstants: true}, 12}} {
		f := withFake(t, 90)
		b, err := New(tc.o)
		require.NoError(t, err)
		ex, err := b.Load(constantsPlan())
		require.NoError(t, err)
		before := f.memsets()
		require.NoError(t, ex.Run(0, &plan.Vars{}))
		require.Equal(t, 4, len(f.launches))
		require.Equal(t, tc.want, f.memsets()-before, "AllConstants %v", tc.o.AllConstants)
		before = f.memsets()
		require.NoError(t, ex.Run(0, &plan.Vars{}))
		require.Equal(t, tc.want, f.memsets()-before, "a second batch stores them again")
		ex.Close()
		b.Close()
	}

	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	defer b.Close()
	ex, err := b.Load(constantsPlan())
	require.NoError(t, err)
	defer ex.Close()
	for range 2 { // launched, then launched and recorded
		require.NoError(t, ex.Run(0, &plan.Vars{}))
	}
	require.Len(t, f.execs, 1)
	for _, g := range f.execs {
		stores := 0
		for _, w := range g {
			if w.launch == nil {
				stores++
			}
		}
		require.Equal(t, 4, stores, "the graph's stores")
	}
	// whatever a constant holds before a replay, the graph stores its
	// value: the rows per SIMD-group (function constant 20), stored once
	m, o := f.find(b.dev.consts[20].ptr)
	want := m[o]
	m[o] = 7
	require.NoError(t, ex.Run(0, &plan.Vars{}))
	require.Equal(t, 1, b.Stats().GraphLaunches, "replayed")
	require.Equal(t, want, m[o])
}

package cuda

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// TestGPUChainHalt: a chain with a halt word (plan.ChainHalt) on the GPU.
// Each "row" step writes 2× row VarPos of x into y; the "stop" step (a
// one-element scale by 0, one threadgroup) overwrites the word, 1.0's
// bits while running. With the word, the rows after the stop stay as
// they were (every kernel returned at once) and the rows before equal the
// chain's without it, which writes them all; three runs each, so the
// later ones replay recorded graphs (where graphs are on).
func TestGPUChainHalt(t *testing.T) {
	b := gpuWith(t, Options{})
	const rows, cols, stopAt = 12, 64, 5
	p := &plan.Plan{Name: "halt"}
	x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: rows * cols * 4})
	y := p.AddBuffer(plan.Buffer{Name: "y", Kind: plan.IO, Size: rows * cols * 4})
	h := p.AddBuffer(plan.Buffer{Name: "halt", Kind: plan.IO, Size: 64})
	ps, _ := p.AddPass("row")
	d := plan.ScaleArgs{X: plan.Binding{Buf: x}, Out: plan.Binding{Buf: y}, N: cols, M: 1, Ldx: cols, Ldo: cols, Scale: 2}.Dispatch()
	d.AddPatch(plan.PatchOffset0+plan.SlotScaleX, plan.VarPos, cols*4, 0)
	d.AddPatch(plan.PatchOffset0+plan.SlotScaleOut, plan.VarPos, cols*4, 0)
	ps.Add(d)
	ps, _ = p.AddPass("stop")
	ps.Add(plan.ScaleArgs{X: plan.Binding{Buf: x}, Out: plan.Binding{Buf: h}, N: 1, M: 1, Ldx: 1, Ldo: 1, Scale: 0}.Dispatch())
	ex, err := b.Load(p)
	require.NoError(t, err)
	defer ex.Close()
	c := ex.(plan.IOChainer)

	in := make([]byte, rows*cols*4)
	for i := range rows * cols {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(i%97)+0.5))
	}
	require.NoError(t, ex.Write(x, 0, in))
	var passes []int
	var vars []plan.Vars
	for r := range rows {
		if r == stopAt {
			passes, vars = append(passes, 1), append(vars, plan.Vars{})
		}
		passes, vars = append(passes, 0), append(vars, plan.Vars{plan.VarPos: int64(r)})
	}
	one := binary.LittleEndian.AppendUint32(nil, math.Float32bits(1))
	run := func(halt *plan.ChainHalt) []float32 {
		t.Helper()
		require.NoError(t, ex.Write(y, 0, make([]byte, rows*cols*4)))
		require.NoError(t, ex.Write(h, 0, one))
		out, word := make([]byte, rows*cols*4), make([]byte, 4)
		io := plan.ChainIO{In: h, Out: y, Dst: out, Also: []plan.ChainRead{{Buf: h, Dst: word}}, Halt: halt}
		n, err := c.RunPassesIO(passes, vars, 0, &io, func(int) bool { return true })
		require.NoError(t, err)
		require.Equal(t, len(passes), n)
		require.Zero(t, binary.LittleEndian.Uint32(word), "the stop step wrote the word")
		f := make([]float32, rows*cols)
		for i := range f {
			f[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
		}
		return f
	}
	halt := &plan.ChainHalt{Buf: h, Running: int32(math.Float32bits(1))}
	for range 3 {
		full, halted := run(nil), run(halt)
		for i := range full {
			require.Equal(t, 2*(float32(i%97)+0.5), full[i], "without the word: element %d", i)
			want := full[i]
			if i >= stopAt*cols {
				want = 0
			}
			require.Equal(t, want, halted[i], "with the word: element %d (row %d; the stop before row %d)", i, i/cols, stopAt)
		}
	}
	t.Logf("%+v", ex.(*Exec).Stats())
}

package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestBeamCopy checks BeamCopy byte for byte against the contract's
// definition applied to a snapshot of the cache: permutations (cycles
// included), several sequences copying one, identity and out-of-range
// sources, patched positions, and every byte outside the copied rows
// (other positions, the gap between width and the position stride, the
// binding's offset) left as it was.
func TestBeamCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 12))
	cases := []struct {
		src                   []int32
		width, posStride, ctx int
		pos0, n               int
	}{
		{[]int32{1, 2, 0}, 5, 7, 6, 1, 4},                                                // a 3-cycle
		{[]int32{0, 0, 0, 0, 0}, 9, 9, 8, 0, 8},                                          // broadcast of sequence 0 (a shared prompt)
		{[]int32{3, 3, 1, 0}, 4, 6, 5, 2, 3},                                             // a source copied twice, a swap through a chain
		{[]int32{0, 1, 2}, 3, 3, 4, 0, 4},                                                // identity: nothing moves
		{[]int32{-1, 7, 0, 2}, 6, 8, 3, 0, 3},                                            // out-of-range sources leave their sequence
		{[]int32{1, 0}, 1, 1, 1, 0, 1},                                                   // one element
		{[]int32{15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, 33, 40, 3, 1, 2}, // 16 sequences rotated
	}
	for ci, c := range cases {
		for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.BF16} {
			es := typ.TypeSize() // f32, f16 and bf16 are blocks of one element
			seqs := len(c.src)
			seqStride := c.ctx*c.posStride + 3
			const off = 3 // elements before the cache in its buffer
			total := (off + seqs*seqStride) * es
			init := make([]byte, total)
			for i := range init {
				init[i] = byte(r.Uint32())
			}
			h := newHarness(t)
			cb := h.buf("cache", init)
			sb := h.i32("src", c.src)
			d := plan.BeamCopyArgs{Type: typ, Cache: plan.Binding{Buf: cb, Off: off * uint64(es)}, Src: bind(sb),
				Width: c.width, Seqs: seqs, PosStride: c.posStride, SeqStride: seqStride}.Dispatch()
			d.AddPatch(plan.PatchBeamCopyPos0, plan.VarPos, 1, 0)
			d.AddPatch(plan.PatchBeamCopyN, plan.VarNTok, 1, 0)
			h.add(d)
			h.run(plan.Vars{plan.VarPos: int64(c.pos0), plan.VarNTok: int64(c.n)})
			got := h.read(cb)

			want := append([]byte(nil), init...)
			for s, f := range c.src {
				if f < 0 || int(f) >= seqs || int(f) == s {
					continue
				}
				for p := c.pos0; p < c.pos0+c.n; p++ {
					dst := (off + s*seqStride + p*c.posStride) * es
					from := (off + int(f)*seqStride + p*c.posStride) * es
					copy(want[dst:dst+c.width*es], init[from:from+c.width*es])
				}
			}
			require.Equal(t, want, got, "case %d, %s", ci, typ)
		}
	}
}

// TestBeamCopyRefuses: the contract's checks and a cache too small for
// the rows are errors, and the cache is left as it was.
func TestBeamCopyRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		a    plan.BeamCopyArgs
		size int
	}{
		"17 sequences":      {plan.BeamCopyArgs{Width: 2, Seqs: 17, N: 1, PosStride: 2, SeqStride: 2}, 64},
		"positions overlap": {plan.BeamCopyArgs{Width: 4, Seqs: 2, N: 2, PosStride: 3, SeqStride: 16}, 64},
		"sequences overlap": {plan.BeamCopyArgs{Width: 4, Seqs: 2, N: 3, PosStride: 4, SeqStride: 8}, 64},
		"cache too small":   {plan.BeamCopyArgs{Width: 4, Seqs: 2, N: 4, PosStride: 4, SeqStride: 16}, 31},
		"absurd pos0":       {plan.BeamCopyArgs{Width: 4, Seqs: 2, N: 1, Pos0: 1 << 30, PosStride: 4, SeqStride: 1 << 33 / 8}, 64},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			init := make([]byte, c.size*4)
			for i := range init {
				init[i] = byte(i)
			}
			cb := h.buf("cache", init)
			src := make([]int32, max(c.a.Seqs, 1))
			for i := range src {
				src[i] = int32((i + 1) % len(src))
			}
			sb := h.i32("src", src)
			c.a.Type, c.a.Cache, c.a.Src = ggml.F32, bind(cb), bind(sb)
			h.add(c.a.Dispatch())
			x, err := h.be.Load(&h.p)
			if err == nil {
				h.ex = x.(*Exec)
				for id, data := range h.init {
					require.NoError(t, h.ex.Write(id, 0, data))
				}
				err = h.ex.Run(0, &plan.Vars{})
				require.Equal(t, init, h.read(cb))
			}
			require.Error(t, err)
		})
	}
}

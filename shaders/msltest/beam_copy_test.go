package msltest

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestBeamCopyKernel runs beam_copy against the CPU backend, bit for bit:
// cycles, a source copied to several sequences, identity and out-of-range
// sources, 16 sequences, widths that are not multiples of the threadgroup
// or SIMD width, a gap between width and position stride, and two steps
// (positions patched per step) applied one after the other.
func TestBeamCopyKernel(t *testing.T) {
	cases := []struct {
		src                   []int32
		width, posStride, ctx int
		steps                 []plan.Vars
	}{
		{[]int32{1, 2, 0}, 5, 7, 6, []plan.Vars{{plan.VarPos: 1, plan.VarNTok: 4}}},
		{[]int32{0, 0, 0, 0, 0}, 384, 384, 9, []plan.Vars{{plan.VarPos: 0, plan.VarNTok: 9}}},
		{[]int32{3, 3, 1, 0}, 257, 260, 5, []plan.Vars{{plan.VarPos: 2, plan.VarNTok: 3}, {plan.VarPos: 0, plan.VarNTok: 2}}},
		{[]int32{0, 1, 2}, 33, 33, 4, []plan.Vars{{plan.VarPos: 0, plan.VarNTok: 4}}},
		{[]int32{-1, 7, 0, 2}, 31, 40, 3, []plan.Vars{{plan.VarPos: 0, plan.VarNTok: 3}}},
		{[]int32{15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, 600, 600, 3, []plan.Vars{{plan.VarPos: 1, plan.VarNTok: 2}}},
	}
	for ci, c := range cases {
		for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.BF16} {
			es := typ.TypeSize() // f32, f16 and bf16 are blocks of one element
			seqs := len(c.src)
			seqStride := c.ctx*c.posStride + 1
			d := plan.BeamCopyArgs{Type: typ, Cache: plan.Binding{Buf: 0}, Src: plan.Binding{Buf: 1},
				Width: c.width, Seqs: seqs, PosStride: c.posStride, SeqStride: seqStride}.Dispatch()
			d.AddPatch(plan.PatchBeamCopyPos0, plan.VarPos, 1, 0)
			d.AddPatch(plan.PatchBeamCopyN, plan.VarNTok, 1, 0)
			cache := plan.Buffer{Name: "cache", Kind: plan.State, Size: int64((seqs*seqStride*es + 3) &^ 3)}
			src := plan.Buffer{Name: "src", Kind: plan.IO, Size: int64(4 * seqs)}
			r := rand.New(rand.NewPCG(uint64(ci), 12))
			Compare(t, Case{Plan: SingleOp(d, cache, src), Steps: c.steps,
				Outputs: []Output{{Buf: 0, Type: ggml.I32}}, // every bit, NaN payloads included
				Fill: func(id plan.BufID, b []byte) {
					if id == 1 {
						for i, s := range c.src {
							binary.LittleEndian.PutUint32(b[4*i:], uint32(s))
						}
						return
					}
					for i := range b {
						b[i] = byte(r.Uint32())
					}
				}})
		}
	}
}

package msltest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestWhisperAlignKernel runs whisper_align against the CPU backend (which
// warps in float64): the path's first frame of every row must be equal.
// Cases: odd token and frame counts, a window shorter than 30 s and a
// whole one, rows too short for the median filter and just long enough
// for its reflect padding at both ends, heads in groups (layers) with gaps
// between them, and a matrix of ±1 whose warping is full of exact ties
// (the reference's tie order decides the path). Weights outside the rows
// and frames the kernel reads are NaN.
func TestWhisperAlignKernel(t *testing.T) {
	cases := []struct {
		name                   string
		heads, group           int
		rows, first, cols, ldw int
		ties                   bool
	}{
		{"odd", 6, 3, 13, 1, 37, 40, false},
		{"window", 4, 4, 31, 3, 1500, 1500, false},
		{"unfiltered", 2, 1, 5, 1, 3, 8, false},
		{"reflect", 3, 3, 6, 2, 4, 4, false},
		{"one row", 2, 2, 3, 1, 9, 9, false},
		{"ties", 2, 2, 8, 1, 64, 64, true},
		{"ties odd", 4, 2, 10, 3, 32, 33, true},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			maxRows := c.rows + 2
			headStride := c.rows * c.ldw
			groupStride := c.group*headStride + 5*c.ldw
			groups := (c.heads + c.group - 1) / c.group
			path := c.rows - 1 - c.first
			d := plan.WhisperAlignArgs{W: plan.Binding{Buf: 0}, Out: plan.Binding{Buf: 1},
				Heads: c.heads, Group: c.group, GroupStride: groupStride, Ldw: c.ldw, Width: 7}.Dispatch()
			d.AddPatch(plan.PatchWhisperAlignRows, plan.VarNTok, 1, 0)
			d.AddPatch(plan.PatchWhisperAlignHeadStride, plan.VarNTok, int64(c.ldw), 0)
			d.AddPatch(plan.PatchWhisperAlignCols, plan.VarUser0, 1, 0)
			d.AddPatch(plan.PatchWhisperAlignFirst, plan.VarUser1, 1, 0)
			w := plan.Buffer{Name: "w", Kind: plan.IO, Size: int64(4 * (groups*groupStride + maxRows*c.ldw))}
			out := plan.Buffer{Name: "out", Kind: plan.IO, Size: int64(4 * (path + 3))}
			fill := func(id plan.BufID, b []byte) {
				r := rand.New(rand.NewPCG(uint64(ci), 7))
				put := func(i int, f float32) { binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f)) }
				nan := float32(math.NaN())
				for i := range len(b) / 4 {
					put(i, nan)
				}
				if id != 0 {
					return
				}
				for h := range c.heads {
					base := h/c.group*groupStride + h%c.group*headStride
					for tk := range c.rows {
						for j := range c.cols {
							// positive, as attention weights; ±1 after
							// standardising where ties are wanted (each
							// row sums to a power of two, half of each
							// frame's rows 1, half 3, in blocks of 1, 2
							// or 4 frames by head)
							v := 0.02 + r.Float32()
							if c.ties {
								v = float32(1 + 2*((tk+j>>(h%3))%2))
							}
							put(base+tk*c.ldw+j, v)
						}
					}
				}
			}
			steps := []plan.Vars{{plan.VarNTok: int64(c.rows), plan.VarUser0: int64(c.cols), plan.VarUser1: int64(c.first)}}
			tc := Case{Plan: SingleOp(d, w, out), Steps: steps, Fill: fill,
				Outputs: []Output{{Buf: 1, Type: ggml.I32}}}
			ref, _ := RunBoth(t, tc)
			Compare(t, tc)
			// every path row has its frame, in order, and nothing past it
			// is written
			p := ref[0]
			for r := range path {
				if p[r] < 0 || p[r] >= float64(c.cols) || (r > 0 && p[r] < p[r-1]) {
					t.Fatalf("row %d enters at frame %v (path %v)", r, p[r], p[:path])
				}
			}
			if p[0] != 0 {
				t.Fatalf("the path starts at frame %v", p[0])
			}
			for _, v := range p[path:] {
				if v != float64(int32(math.Float32bits(float32(math.NaN())))) {
					t.Fatalf("written past the path: %v", p)
				}
			}
		})
	}
}

// TestTokenLogprobKernel runs token_logprob against the CPU backend: rows
// with −Inf entries (filtered logits), ids at both ends of the rows and
// outside them (−Inf), on a real vocabulary and a small one with a row
// stride.
func TestTokenLogprobKernel(t *testing.T) {
	for _, v := range []struct{ n, m, ldx int }{{51864, 3, 51864}, {300, 7, 310}} {
		d := plan.TokenLogprobArgs{X: plan.Binding{Buf: 0}, Ids: plan.Binding{Buf: 1}, Out: plan.Binding{Buf: 2}, N: v.n, Ldx: v.ldx}.Dispatch()
		d.AddPatch(plan.PatchTokenLogprobM, plan.VarNTok, 1, -1)
		ids := []int32{0, int32(v.n - 1), 5, -1, int32(v.n), 17, 42}[:v.m]
		fill := func(id plan.BufID, b []byte) {
			r := rand.New(rand.NewPCG(uint64(v.n), 3))
			put := func(i int, u uint32) { binary.LittleEndian.PutUint32(b[4*i:], u) }
			switch id {
			case 0:
				for i := range len(b) / 4 {
					f := float32(r.NormFloat64()) * 4
					if r.IntN(4) == 0 {
						f = float32(math.Inf(-1))
					}
					put(i, math.Float32bits(f))
				}
				put(2*v.ldx+5, math.Float32bits(float32(math.Inf(-1)))) // a filtered token
			case 1:
				for i, t := range ids {
					put(i, uint32(t))
				}
			default:
				clear(b)
			}
		}
		p := SingleOp(d, plan.Buffer{Name: "x", Kind: plan.IO, Size: int64(4 * v.m * v.ldx)},
			plan.Buffer{Name: "ids", Kind: plan.IO, Size: int64(4 * v.m)}, plan.Buffer{Name: "out", Kind: plan.IO, Size: int64(4 * v.m)})
		Compare(t, Case{Plan: p, Steps: []plan.Vars{{plan.VarNTok: int64(v.m + 1)}}, Fill: fill, Tol: 2e-5,
			Outputs: []Output{{Buf: 2, Type: ggml.F32}}})
	}
}

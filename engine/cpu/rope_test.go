package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// refRope rotates one head (float64 reference of the contract).
func refRope(v []float64, pos int, freqs []float32, ropeDim int, neox bool, mscale float64) {
	half := ropeDim / 2
	for i := 0; i < half; i++ {
		th := float64(pos) * float64(freqs[i])
		c, s := math.Cos(th)*mscale, math.Sin(th)*mscale
		ia, ib := 2*i, 2*i+1
		if neox {
			ia, ib = i, i+half
		}
		a, b := v[ia], v[ib]
		v[ia], v[ib] = a*c-b*s, a*s+b*c
	}
}

func ropeFreqs(half int, base float64) []float32 {
	f := make([]float32, half)
	for i := range f {
		f[i] = float32(math.Pow(base, -2*float64(i)/float64(2*half)))
	}
	return f
}

func TestRope(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	hd, nHead, m := 64, 5, 4
	ldx := nHead*hd + 3
	for _, mode := range []plan.RopeMode{plan.RopeNormal, plan.RopeNeoX} {
		for _, ropeDim := range []int{64, 32} {
			for _, perSeq := range []bool{false, true} {
				for _, ms := range []float32{0, 1.25} {
					x := randVec(r, (m-1)*ldx+nHead*hd, 1)
					for i := 0; i < m-1; i++ {
						for j := nHead * hd; j < ldx; j++ {
							x[i*ldx+j] = float32NaN() // gaps must stay untouched
						}
					}
					freqs := ropeFreqs(ropeDim/2, 10000)
					h := newHarness(t)
					xb, fb := h.f32("x", x), h.f32("freqs", freqs)
					flags := uint32(0)
					if perSeq {
						flags = plan.FlagPerSeqRows
					}
					d := plan.RopeArgs{X: bind(xb), Freqs: bind(fb), HeadDim: int(hd), NHead: int(nHead), M: int(m), Ldx: int(ldx), Mode: mode, RopeDim: int(ropeDim), Flags: uint32(flags), MScale: ms}.Dispatch()
					d.NPatch = 1
					d.Patch[0] = plan.Patch{Target: plan.PatchRopePos0, Var: plan.VarPos, Mul: 1, Base: 3}
					h.add(d)
					h.run(plan.Vars{plan.VarPos: 1000}) // pos0 = 1003
					got := h.readF32(xb)
					want := make([]float64, m*nHead*hd)
					scale := 1.0
					if ms != 0 {
						scale = float64(ms)
					}
					for i := 0; i < m; i++ {
						pos := 1003 + i
						if perSeq {
							pos = 1003
						}
						for hh := 0; hh < nHead; hh++ {
							v := toF64(x[i*ldx+hh*hd : i*ldx+hh*hd+hd])
							refRope(v, pos, freqs, ropeDim, mode == plan.RopeNeoX, scale)
							copy(want[(i*nHead+hh)*hd:], v)
						}
					}
					checkOut(t, got, want, m, ldx, nHead*hd, 2e-6, "rope")
					// dims past ropeDim are bit-identical
					for i := 0; i < m; i++ {
						for hh := 0; hh < nHead; hh++ {
							for j := ropeDim; j < hd; j++ {
								o := i*ldx + hh*hd + j
								require.Equal(t, x[o], got[o])
							}
						}
					}
				}
			}
		}
	}
}

// cacheLayout is a [seq][head][pos][dim] cache.
type cacheLayout struct{ seqs, heads, ctx, hd int }

func (c cacheLayout) strides() (hs, ps, ss int) { return c.ctx * c.hd, c.hd, c.heads * c.ctx * c.hd }
func (c cacheLayout) size() int                 { return c.seqs * c.heads * c.ctx * c.hd }
func (c cacheLayout) at(s, h, p, i int) int     { hs, ps, ss := c.strides(); return s*ss + h*hs + p*ps + i }

func TestRopeKV(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	hd, nHead, nKV, m := 64, 4, 2, 3
	ldq := (nHead+2*nKV)*hd + 2
	lay := cacheLayout{seqs: 3, heads: nKV, ctx: 10, hd: hd}
	hs, ps, ss := lay.strides()
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16} {
		for _, perSeq := range []bool{false, true} {
			for _, mode := range []plan.RopeMode{plan.RopeNormal, plan.RopeNeoX} {
				qkv := randVec(r, (m-1)*ldq+(nHead+2*nKV)*hd, 1)
				freqs := ropeFreqs(hd/4, 10000) // ropeDim = hd/2
				h := newHarness(t)
				qb, fb := h.f32("qkv", qkv), h.f32("freqs", freqs)
				var kb, vb plan.BufID
				if typ == ggml.F32 {
					kb, vb = h.nan("k", lay.size()), h.nan("v", lay.size())
				} else {
					poison := make([]uint16, lay.size())
					for i := range poison {
						poison[i] = 0x7e00
					}
					kb, vb = h.buf("k", u16Bytes(poison)), h.buf("v", u16Bytes(poison))
				}
				flags := uint32(0)
				if perSeq {
					flags = plan.FlagPerSeqRows
				}
				d := plan.RopeKVArgs{Type: typ, QKV: bind(qb), Freqs: bind(fb), KCache: bind(kb), VCache: bind(vb), HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: int(m), Ldqkv: int(ldq), Mode: mode, RopeDim: int(hd / 2), HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss), Flags: uint32(flags)}.Dispatch()
				d.NPatch = 1
				d.Patch[0] = plan.Patch{Target: plan.PatchRopeKVPos0, Var: plan.VarPos, Mul: 1}
				h.add(d)
				h.run(plan.Vars{plan.VarPos: 6})

				gotQ := h.readF32(qb)
				wantK := map[int]float64{}
				wantV := map[int]float64{}
				for i := 0; i < m; i++ {
					pos, seq := 6+i, 0
					if perSeq {
						pos, seq = 6, i
					}
					for hh := 0; hh < nHead+nKV; hh++ {
						v := toF64(qkv[i*ldq+hh*hd : i*ldq+hh*hd+hd])
						refRope(v, pos, freqs, hd/2, mode == plan.RopeNeoX, 1)
						for j := range v {
							g := float64(gotQ[i*ldq+hh*hd+j])
							require.InDelta(t, v[j], g, 2e-6*(1+math.Abs(v[j])), "rotated q/k row %d head %d dim %d", i, hh, j)
							if hh >= nHead {
								wantK[lay.at(seq, hh-nHead, pos, j)] = v[j]
							}
						}
					}
					for hh := 0; hh < nKV; hh++ {
						for j := 0; j < hd; j++ {
							wantV[lay.at(seq, hh, pos, j)] = float64(qkv[i*ldq+(nHead+nKV+hh)*hd+j])
						}
					}
				}
				for name, pair := range map[string]struct {
					b    plan.BufID
					want map[int]float64
				}{"k": {kb, wantK}, "v": {vb, wantV}} {
					var got []float32
					if typ == ggml.F32 {
						got = h.readF32(pair.b)
					} else {
						for _, u := range bytesU16(h.read(pair.b)) {
							got = append(got, ggml.FP16ToFP32(u))
						}
					}
					for i, g := range got {
						w, ok := pair.want[i]
						if !ok {
							require.True(t, math.IsNaN(float64(g)), "%s cache element %d written outside the rows", name, i)
							continue
						}
						tol := 2e-6 * (1 + math.Abs(w))
						if typ == ggml.F16 {
							tol = 1e-3 * (1 + math.Abs(w))
						}
						require.InDelta(t, w, float64(g), tol, "%s cache element %d", name, i)
					}
				}
			}
		}
	}
}

func u16Bytes(v []uint16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		b[2*i], b[2*i+1] = byte(x), byte(x>>8)
	}
	return b
}

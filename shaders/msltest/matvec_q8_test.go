package msltest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// mxQ8Tight bounds the 8-bit-activation mat-vecs against their float64
// emulation (q8xReference), relative to max(1, max|ref|): the emulation
// quantizes x' from float64 values where the kernel rounds float32 ones,
// so a quant can land one step apart where v/d sits on a half (one such
// step is about 5e-4 of these outputs); a wrong scale, block or nibble is
// off by far more.
const mxQ8Tight = 2e-3

// TestMatVecQ8Activations runs the 8-bit-activation mat-vecs
// (matvec_q8.metal, Tuning.MatVecQ8K: the cuda family's decode products
// from 2048 wide) on q8_0 and q4_0 weights, repacked (the CUDA host's
// layout) and in the file's layout, every form, against a float64
// emulation of their arithmetic (activations quantized per 32 as ggml's
// q8_0, integer block sums), against the exact product and against the
// CPU backend (whose decode products quantize the activations too) within
// mxCPUBound. k = 2048 (64 blocks, two a lane), 2144 (67: lanes with
// one block) and 4192 (131, from MatVecQ8LongK: the long products'
// geometry, Tuning.MatVecQ8SIMDGroupsLong), 37 rows (ragged row groups),
// one activation row aligned;
// three rows, or unaligned activations, keep mat_vec; and with the grid
// capped at two threadgroups (Tuning.MatVecQ8Groups), each looping over
// row sets. Both ways of quantizing x': in every threadgroup (_q8x) and
// once by a pre-pass launch (Tuning.MatVecQ8PreK: quantize_q8x's form,
// then mat_vec_q8p). On a device (HARK_MSLTEST_DEVICE) it runs the
// device's own tuning.
func TestMatVecQ8Activations(t *testing.T) {
	be, tun := cudaTuning(t)
	tun.MatVecQ8KQ8_0 = tun.MatVecQ8K // q8_0 weights take them by choice (the cuda family keeps float activations for them)
	require.LessOrEqual(t, tun.MatVecQ8K, uint32(2048), "the tuning under test takes the 8-bit-activation mat-vecs")
	r := rand.New(rand.NewPCG(34, 8))
	for _, cf := range []struct{ repack, capped, pre bool }{
		{true, false, false}, {false, false, false}, {true, true, false}, {true, false, true}, {false, false, true}, {true, true, true}} {
		repack := cf.repack
		tn := tun
		if !repack {
			tn.Repack = 1
		}
		if cf.capped { // two threadgroups, each looping over the row sets (Tuning.MatVecQ8Groups)
			tn.Cores, tn.MatVecQ8Groups = 2, 1
		}
		tn.MatVecQ8PreK = shaders.MatVecQ8Off
		if cf.pre {
			tn.MatVecQ8PreK = tn.MatVecQ8K
		}
		bt := be.WithTuning(tn)
		for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
			for _, k := range []int{int(max(tun.MatVecQ8K, 2048)), int(max(tun.MatVecQ8K, 2048)) + 96, shaders.MatVecQ8LongK + 96} {
				for _, kern := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec} {
					for _, tc := range []struct {
						m       int
						aligned bool
					}{{1, true}, {1, false}, {3, true}} {
						if cf.capped && !(tc.m == 1 && tc.aligned) {
							continue
						}
						name := fmt.Sprintf("%s %s k=%d m=%d aligned=%v repack=%v capped=%v pre=%v", kern, typ, k, tc.m, tc.aligned, repack, cf.capped, cf.pre)
						c, exact := productCaseLayout(t, r, kern, typ, 37, k, tc.m, true, false, tc.aligned)
						ls, err := shaders.LaunchFor(&c.d, &tn, nil)
						require.NoError(t, err, name)
						q8x := tc.m == 1 && tc.aligned
						pl := ls[len(ls)-1] // the product
						if q8x && cf.pre {
							require.Len(t, ls, 2, name)
							require.True(t, strings.HasSuffix(ls[0].Function, "quantize_q8x"), "%s: %s", name, ls[0].Function)
							require.Equal(t, "mat_vec_"+q8Suffix[typ]+"_q8p", pl.Function, name)
							require.Equal(t, ls[0].Scratch, pl.Scratch, name)
						} else {
							require.Len(t, ls, 1, name)
							require.Equal(t, q8x, strings.HasSuffix(pl.Function, "_q8x"), "%s: %s", name, pl.Function)
						}
						if cf.capped {
							require.Equal(t, uint32(2), pl.Groups[0], name)
						}
						if q8x && k >= shaders.MatVecQ8LongK {
							require.Equal(t, 32*tn.MatVecQ8SIMDGroupsLong, pl.Threads[0], name)
						}
						if !q8x {
							checkOn(t, bt, name, typ, c, exact)
							continue
						}
						p, _ := c.plan()
						l := shaders.Layouts(p, &tn)
						require.Equal(t, repack, l != nil && l[c.d.Bind[0].Buf].Repacked(), name)
						got := runOn(t, bt, c)
						cpu := runOn(t, cpuShared, c)
						emu := q8xReference(c, exact)
						eEmu, eExact := relErr(got, emu), relErr(got, exact)
						cpu64 := make([]float64, len(cpu))
						for i, v := range cpu {
							cpu64[i] = float64(v)
						}
						eCPU := relErr(got, cpu64)
						t.Logf("%-60s emulated %.2e  exact %.2e  cpu %.2e", name, eEmu, eExact, eCPU)
						if eEmu > mxQ8Tight {
							logOff(t, got, emu)
						}
						require.LessOrEqual(t, eEmu, mxQ8Tight, "%s: vs the emulated 8-bit product", name)
						require.LessOrEqual(t, eExact, mxCPUBound[typ], "%s: vs the exact product", name)
						require.LessOrEqual(t, eCPU, mxCPUBound[typ], "%s: vs the CPU backend", name)
					}
				}
			}
		}
	}
}

// q8Suffix names the 8-bit-activation mat-vecs' weight types.
var q8Suffix = map[ggml.Type]string{ggml.Q8_0: "q8_0", ggml.Q4_0: "q4_0"}

// TestMatVecQ8PreQuantizedSame: x' quantized once by the pre-pass
// (Tuning.MatVecQ8PreK, quantize_q8x's forms, then mat_vec_q8p) gives the
// in-kernel quantization's (_q8x) result bit for bit where x' needs no
// reduction across the row: mat_vec (also with its GELU-out flag, which
// the pre-pass hands the product), SiLU·mul and GELU·mul. RMSNorm's Σx²
// is summed by blocks there and by threads here, so 1/rms may differ in
// its last bits: within 1e-6. k = 2048 and 8192 (the 1B shape's down
// product), repacked and in the file's layout.
func TestMatVecQ8PreQuantizedSame(t *testing.T) {
	be, tun := cudaTuning(t)
	tun.MatVecQ8KQ8_0 = tun.MatVecQ8K
	r := rand.New(rand.NewPCG(34, 26))
	for _, repack := range []bool{true, false} {
		off, on := tun, tun
		off.MatVecQ8PreK, on.MatVecQ8PreK = shaders.MatVecQ8Off, tun.MatVecQ8K
		if !repack {
			off.Repack, on.Repack = 1, 1
		}
		bOff, bOn := be.WithTuning(off), be.WithTuning(on)
		check := func(c *mxCase, name string) {
			lOff, err := shaders.LaunchFor(&c.d, &off, nil)
			require.NoError(t, err, name)
			lOn, err := shaders.LaunchFor(&c.d, &on, nil)
			require.NoError(t, err, name)
			require.Len(t, lOff, 1, name)
			require.True(t, strings.HasSuffix(lOff[0].Function, "_q8x"), "%s: %s", name, lOff[0].Function)
			require.Len(t, lOn, 2, name)
			a, b := runOn(t, bOff, c), runOn(t, bOn, c)
			if c.d.Kernel == plan.RMSNormMatVec {
				e := relErr(b, float64s(a))
				t.Logf("%-50s pre-pass vs in-kernel %.2e", name, e)
				require.LessOrEqual(t, e, 1e-6, name)
				return
			}
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					require.Failf(t, "not the same bits", "%s: element %d: pre-pass %g, in-kernel %g", name, i, b[i], a[i])
				}
			}
		}
		for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
			for _, k := range []int{int(max(tun.MatVecQ8K, 2048)), 8192} {
				for _, kern := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec} {
					c, _ := productCaseLayout(t, r, kern, typ, 37, k, 1, true, false, true)
					check(c, fmt.Sprintf("%s %s k=%d repack=%v", kern, typ, k, repack))
				}
				// mat_vec with its GELU-out flag (a bias, no residual)
				c, exact := productCaseLayout(t, r, plan.MatVec, typ, 37, k, 1, false, false, true)
				geluOut(r, c, exact)
				check(c, fmt.Sprintf("mat_vec gelu-out %s k=%d repack=%v", typ, k, repack))
			}
		}
	}
}

// q8xReference is c's product as the 8-bit-activation mat-vecs compute it,
// in float64: x' per 32 elements quantized with d = max|x'|/127 (kept as
// f16) and q = round(x'/d), each weight block's integer sum with those
// quants times both scales; RMSNorm's 1/rms scales the sums (x' is x⊙g).
// exact supplies the output's untouched elements (the sentinels).
func q8xReference(c *mxCase, exact []float64) []float64 {
	a := plan.DecodeProduct(&c.d)
	n, k, m := a.N, a.K, a.M
	f32 := func(slot int) []float32 {
		b := c.d.Bind[slot]
		return ggml.BytesF32(c.bufs[b.Buf].data[b.Off:])
	}
	w := c.bufs[c.d.Bind[0].Buf].data
	x, x2 := f32(1), f32(5)
	bias, res := f32(3), f32(4)
	ldu := 0
	if c.d.Kernel == plan.SiLUMulMatVec || c.d.Kernel == plan.GELUMulMatVec {
		ldu = plan.DecodeGated(&c.d).Ldu
	}
	eps := 0.0
	if c.d.Kernel == plan.RMSNormMatVec {
		eps = float64(plan.DecodeRMSNormMatVec(&c.d).Eps)
	}
	out := append([]float64(nil), exact...)
	v := make([]float32, k)
	for i := 0; i < m; i++ {
		inv := 1.0
		var ss float64
		for e := 0; e < k; e++ {
			g := x[i*a.Ldx+e]
			switch c.d.Kernel {
			case plan.RMSNormMatVec:
				ss += float64(g) * float64(g)
				v[e] = g * x2[e]
			case plan.SiLUMulMatVec:
				gf := float64(g)
				v[e] = float32(gf/(1+math.Exp(-gf))) * x2[i*ldu+e]
			case plan.GELUMulMatVec:
				gf := float64(g)
				v[e] = float32(0.5*gf*(1+math.Tanh(math.Sqrt(2/math.Pi)*(gf+0.044715*gf*gf*gf)))) * x2[i*ldu+e]
			default:
				v[e] = g
			}
		}
		if c.d.Kernel == plan.RMSNormMatVec {
			inv = 1 / math.Sqrt(ss/float64(k)+eps)
		}
		sums := q8xSums(w, c.d.Type, n, k, v[:k])
		for j := 0; j < n; j++ {
			s := sums[j] * inv
			s += float64(bias[j]) + float64(res[i*a.Ldr+j])
			out[i*a.Ldo+j] = s
		}
	}
	return out
}

// q8xSums is each of n weight rows (w, in the file's layout of typ) times
// v as the 8-bit-activation mat-vecs compute it, in float64: v quantized
// per 32 elements with d = max|v|/127 (kept as f16) and q = round(v/d),
// each block's integer sum times both scales.
func q8xSums(w []byte, typ ggml.Type, n, k int, v []float32) []float64 {
	nb := k / 32
	qx := make([]int, k)
	dx := make([]float64, nb)
	for b := 0; b < nb; b++ {
		var am float32
		for _, f := range v[32*b : 32*b+32] {
			am = max(am, float32(math.Abs(float64(f))))
		}
		d := am / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for e := 32 * b; e < 32*b+32; e++ {
			qx[e] = int(math.Round(float64(v[e] * id)))
		}
		dx[b] = float64(ggml.FP16ToFP32(ggml.FP32ToFP16(d)))
	}
	ts := typ.TypeSize()
	rb := nb * ts
	sums := make([]float64, n)
	for j := 0; j < n; j++ {
		var s float64
		for b := 0; b < nb; b++ {
			blk := w[j*rb+b*ts:]
			dw := float64(ggml.FP16ToFP32(binary.LittleEndian.Uint16(blk)))
			si := 0
			for e := 0; e < 32; e++ {
				var qw int
				if typ == ggml.Q8_0 {
					qw = int(int8(blk[2+e]))
				} else if e < 16 {
					qw = int(blk[2+e]&15) - 8
				} else {
					qw = int(blk[2+e-16]>>4) - 8
				}
				si += qw * qx[32*b+e]
			}
			s += dw * dx[b] * float64(si)
		}
		sums[j] = s
	}
	return sums
}

package msltest

import (
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

// attnTCTol bounds |got-exact|/(1+|exact|) of attention against the
// float64 reference: the tensor-core kernel's f16 hi+lo products carry
// about 2^-21 of each product's magnitude, the MSL kernels float's own
// rounding; both land near 1e-6 at these sizes.
const attnTCTol = 1e-5

// TestAttentionTensorCores: attention at the shapes of the tensor-core
// flash attention (cuda/native/attention_mma.cu, issue #35) against the
// float64 reference, held to attnTCTol. Its MSL twins
// (attention_mma16_*, attention_mma16_hd128_*: the native blocking of 16
// rows a SIMD-group, 32 a threadgroup, 32-key tiles from the
// threadgroup's first visible tile, the per-row online softmax) run
// everywhere, under AttnMMA with MatMulMMA unset (no native module): in
// the executor and, translated, on a GPU. On a CUDA GPU
// ($HARK_MSLTEST_DEVICE=cuda, sm_80 or newer) the device's own tuning
// then runs the same cases on attention_mma_tc_*. Odd sizes: rows and
// keys not multiples of the 32-row block or the 32-key tile, head sizes 8
// (a padded 16-wide slice), 40, 64 and 128, GQA ratios 1, 3 and 4, causal
// prefill over a cache (pos0 > 0), a sliding window, the encoder and
// cross-attention (m ≠ kvLen), f32 and f16 K/V, K/V rows padded and on
// 16-byte boundaries (the encoder's layout). A case with probs bound
// stays on attention_mma everywhere. Every case has at least 256 (row,
// head) pairs, so no tuning splits it over the keys (AttnSplitBelow).
func TestAttentionTensorCores(t *testing.T) {
	be, tun := deviceTuning(t)
	twin := tun
	twin.AttnMMA, twin.MatMulMMA = 1, 0
	type run struct {
		prefix string // of the functions it launches
		tun    shaders.Tuning
	}
	runs := []run{{"attention_mma16_", twin}}
	if tun.AttnMMA != 0 { // the device loads the native tensor-core kernels
		runs = append(runs, run{"attention_mma_tc_", tun})
	}
	r := rand.New(rand.NewPCG(35, 2))
	causal := plan.FlagCausal
	for _, run := range runs {
		rbe := be.WithTuning(run.tun)
		for _, ty := range []ggml.Type{ggml.F32, ggml.F16} {
			for _, c := range []attnCase{
				{hd: 64, nHead: 4, nKV: 4, m: 77, kvLen: 77},                                       // encoder
				{hd: 64, nHead: 6, nKV: 6, m: 45, kvLen: 37},                                       // cross-attention
				{hd: 64, nHead: 6, nKV: 2, m: 50, kvLen: 83, pos0: 33, flags: causal},              // prefill over a cache, GQA 3
				{hd: 128, nHead: 8, nKV: 2, m: 40, kvLen: 71, pos0: 31, flags: causal},             // GQA 4
				{hd: 128, nHead: 8, nKV: 8, m: 33, kvLen: 33},                                      // encoder, 128-dim heads
				{hd: 8, nHead: 8, nKV: 8, m: 35, kvLen: 35, flags: causal},                         // stories260K's heads
				{hd: 40, nHead: 16, nKV: 4, m: 17, kvLen: 17, flags: causal},                       // a partial 16-wide slice
				{hd: 64, nHead: 8, nKV: 4, m: 40, kvLen: 80, pos0: 40, flags: causal, window: 45},  // sliding window
				{hd: 64, nHead: 8, nKV: 8, m: 33, kvLen: 70, pos0: 37, flags: causal, probs: true}, // probs: attention_mma
				// K/V rows on 16-byte boundaries (the encoder's layout)
				{hd: 64, nHead: 4, nKV: 4, m: 77, kvLen: 77, aligned: true},
				{hd: 64, nHead: 6, nKV: 6, m: 45, kvLen: 37, aligned: true},
				{hd: 128, nHead: 8, nKV: 2, m: 40, kvLen: 71, pos0: 31, flags: causal, aligned: true},
				{hd: 40, nHead: 16, nKV: 4, m: 17, kvLen: 17, flags: causal, aligned: true},
				{hd: 64, nHead: 8, nKV: 4, m: 40, kvLen: 80, pos0: 40, flags: causal, window: 45, aligned: true},
				// a window whose start moves by more than a tile inside one
				// 32-row block: its rows begin on different tiles
				{hd: 128, nHead: 8, nKV: 4, m: 64, kvLen: 130, pos0: 66, flags: causal, window: 20},
			} {
				c.ty = ty
				fn := attnExactCase(t, rbe, &run.tun, r, c)
				want := run.prefix
				if c.probs {
					want = "attention_mma_f"
				} else if c.hd > 64 {
					want += "hd128_"
				}
				require.True(t, strings.HasPrefix(fn, want), "%+v ran %s, want %s*", c, fn, want)
			}
		}
	}
}

// attnExactCase runs c on be with tun's launches and compares out with
// the float64 reference; it returns the main launch's function.
func attnExactCase(t *testing.T, be plan.Backend, tun *shaders.Tuning, r *rand.Rand, c attnCase) string {
	t.Helper()
	w := c.nHead * c.hd
	ldq, ldo := w+5, w+3
	ps := c.hd + 2
	hs := (c.kvLen+1)*ps + 1
	if c.aligned { // the f32 tile loads' 4-wide path
		ps, hs = c.hd, c.kvLen*c.hd
	}
	cells := max(1, c.nKV*hs+3)
	kvVals := func() ([]float32, []byte) {
		v := kitRand(r, cells, 1)
		if c.ty == ggml.F16 {
			b := kitF16(v)
			return kitAsF16(b), b
		}
		return v, kitF32(v)
	}
	q := kitRand(r, (c.m-1)*ldq+w, 1)
	K, kb := kvVals()
	V, vb := kvVals()
	ldp := c.kvLen + 2
	var probs []byte
	if c.probs {
		probs = kitF32(kitNaNs(c.nHead*c.m*ldp + 1))
	}
	scale := float32(1 / math.Sqrt(float64(c.hd)))
	d := plan.AttentionArgs{Type: c.ty, HeadDim: c.hd, NHead: c.nHead, NKV: c.nKV, M: c.m, Ldq: ldq, Ldo: ldo, KVLen: c.kvLen, Pos0: c.pos0, Flags: uint32(c.flags), Scale: scale, HeadStride: hs, PosStride: ps, Ldp: ldp, Window: c.window}.Dispatch()
	outInit := kitNaNs((c.m-1)*ldo + w + 2)
	got := kitRunOn(t, be, d, [][]byte{kitF32(q), kb, vb, kitF32(outInit), probs}, nil)

	exact := append([]float32(nil), outInit...) // NaN where nothing is written
	for tr := range c.m {
		qpos := c.pos0 + tr
		nv := c.kvLen
		if c.flags&plan.FlagCausal != 0 {
			nv = min(nv, qpos+1)
		}
		first := 0
		if c.window > 0 && qpos+1 > c.window {
			first = qpos + 1 - c.window
		}
		for h := range c.nHead {
			base := h / (c.nHead / c.nKV) * hs
			qr := q[tr*ldq+h*c.hd:]
			s := make([]float64, max(0, nv-first))
			mx := math.Inf(-1)
			for j := first; j < nv; j++ {
				var dot float64
				for e := range c.hd {
					dot += float64(qr[e]) * float64(K[base+j*ps+e])
				}
				s[j-first] = dot * float64(scale)
				mx = max(mx, s[j-first])
			}
			var sum float64
			acc := make([]float64, c.hd)
			for j := first; j < nv; j++ {
				p := math.Exp(s[j-first] - mx)
				sum += p
				for e := range c.hd {
					acc[e] += p * float64(V[base+j*ps+e])
				}
			}
			for e := range c.hd {
				o := 0.0
				if sum > 0 {
					o = acc[e] / sum
				}
				exact[tr*ldo+h*c.hd+e] = float32(o)
			}
		}
	}
	for i := range d.Bind[:5] {
		d.Bind[i].Buf = plan.BufID(i)
	}
	if !c.probs {
		d.Bind[plan.SlotAttentionProbs].Buf = plan.NoBuf
	}
	ls, err := shaders.LaunchFor(&d, tun, nil)
	require.NoError(t, err)
	fn := ls[0].Function
	e := kitCompare(t, exact, ggml.BytesF32(got[3]), attnTCTol, fmt.Sprintf("%s %+v", fn, c))
	t.Logf("%-30s hd=%d heads=%d/%d m=%d kv=%d pos0=%d flags=%d window=%d aligned=%v: %.2e", fn, c.hd, c.nHead, c.nKV, c.m, c.kvLen, c.pos0, c.flags, c.window, c.aligned, e)
	return fn
}

package llm

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
)

// refModel is an independent float64 forward pass over f32 weights, the
// textbook formulation of the families (the blocks the descriptor names),
// used to check the plan.
// With half set it rounds what llama.cpp's CPU attention rounds to f16.
type refModel struct {
	a    Arch
	h    HParams
	f    *gguf.File
	half struct{ kv, q, p, fa bool }
}

func (r *refModel) w(t *testing.T, name string) []float64 {
	tn, ok := r.f.Tensor(name)
	require.True(t, ok, name)
	require.Equal(t, ggml.F32, tn.Type, name)
	v := ggml.BytesF32(tn.Data)
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func (r *refModel) has(name string) bool { _, ok := r.f.Tensor(name); return ok }

func f16(x float64) float64 { return float64(ggml.FP16ToFP32(ggml.FP32ToFP16(float32(x)))) }

func rmsnorm(x, w []float64, eps float64) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	s := 1 / math.Sqrt(ss/float64(len(x))+eps)
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] * s * w[i]
	}
	return out
}

// matvec: W is [n][k] row-major.
func matvec(w, x []float64, n int) []float64 {
	k := len(x)
	out := make([]float64, n)
	for i := range n {
		var s float64
		for j := range k {
			s += w[i*k+j] * x[j]
		}
		out[i] = s
	}
	return out
}

func addTo(a, b []float64) {
	for i := range a {
		a[i] += b[i]
	}
}

// logits returns the logits after every token of toks.
func (r *refModel) logits(t *testing.T, toks []int32) [][]float64 {
	h := r.h
	hd, ne := h.HeadDim, h.NEmbd
	emb := r.w(t, "token_embd.weight")
	outW := emb
	if r.has("output.weight") {
		outW = r.w(t, "output.weight")
	}
	var factors []float32
	if r.has("rope_freqs.weight") {
		tn, _ := r.f.Tensor("rope_freqs.weight")
		factors = ggml.BytesF32(tn.Data)
	}
	fr32, err := ropeFreqs(h, factors)
	require.NoError(t, err)
	lh := h // sliding-window layers: their own base, unscaled
	lh.RopeBase, lh.Scaling = r.a.LocalRopeBase, RopeScaling{}
	local := fr32
	if r.a.SlidingPattern > 0 {
		local, err = ropeFreqs(lh, nil)
		require.NoError(t, err)
	}
	norm := func(x []float64, name string) []float64 {
		if !r.has(name) {
			return append([]float64(nil), x...) // no norm at this place
		}
		return rmsnorm(x, r.w(t, name), float64(h.Eps))
	}
	type layerKV struct{ k, v [][]float64 } // [pos][kvd]
	kv := make([]layerKV, h.NLayer)
	var all [][]float64
	rope := func(v []float64, pos int, freqs []float32) {
		half := h.RopeDim / 2
		for i := range half {
			ang := float64(pos) * float64(freqs[i])
			c, s := math.Cos(ang), math.Sin(ang)
			a, b := 2*i, 2*i+1
			if r.a.RopeMode == 2 {
				a, b = i, i+half
			}
			v[a], v[b] = v[a]*c-v[b]*s, v[a]*s+v[b]*c
		}
	}
	for pos, tok := range toks {
		x := append([]float64(nil), emb[int(tok)*ne:(int(tok)+1)*ne]...)
		if r.a.EmbedScale {
			for i := range x {
				x[i] *= float64(float32(math.Sqrt(float64(ne))))
			}
		}
		for l := range h.NLayer {
			p := fmt.Sprintf("blk.%d.", l)
			freqs, first := fr32, 0
			if r.a.Sliding(l) {
				freqs, first = local, max(0, pos-h.Window+1)
			}
			xn := norm(x, p+"attn_norm.weight")
			q := matvec(r.w(t, p+"attn_q.weight"), xn, h.QDim())
			k := matvec(r.w(t, p+"attn_k.weight"), xn, h.KVDim())
			v := matvec(r.w(t, p+"attn_v.weight"), xn, h.KVDim())
			for _, bb := range []struct {
				n string
				d []float64
			}{{"attn_q", q}, {"attn_k", k}, {"attn_v", v}} {
				if r.has(p + bb.n + ".bias") {
					addTo(bb.d, r.w(t, p+bb.n+".bias"))
				}
			}
			for hh := range h.NHead {
				qh := q[hh*hd : (hh+1)*hd]
				if r.a.QKNorm {
					copy(qh, rmsnorm(qh, r.w(t, p+"attn_q_norm.weight"), float64(h.Eps)))
				}
				rope(qh, pos, freqs)
			}
			for hh := range h.NKV {
				kh := k[hh*hd : (hh+1)*hd]
				if r.a.QKNorm {
					copy(kh, rmsnorm(kh, r.w(t, p+"attn_k_norm.weight"), float64(h.Eps)))
				}
				rope(kh, pos, freqs)
			}
			if r.half.kv {
				for i := range k {
					k[i], v[i] = f16(k[i]), f16(v[i])
				}
			}
			if r.half.q {
				for i := range q {
					q[i] = f16(q[i])
				}
			}
			kv[l].k = append(kv[l].k, k)
			kv[l].v = append(kv[l].v, v)
			att := make([]float64, h.QDim())
			grp := h.NHead / h.NKV
			for hh := range h.NHead {
				kh := hh / grp
				sc := make([]float64, pos+1)
				mx := math.Inf(-1)
				for j := range sc {
					if j < first {
						continue // before the sliding window
					}
					var s float64
					for i := range hd {
						s += q[hh*hd+i] * kv[l].k[j][kh*hd+i]
					}
					sc[j] = s / math.Sqrt(float64(hd))
					mx = max(mx, sc[j])
				}
				if r.half.fa {
					// llama.cpp's CPU flash attention: online softmax with
					// the V accumulator held in f16.
					acc := make([]float64, hd)
					S, M := 0.0, math.Inf(-1)
					for j := range sc {
						s := float64(float32(sc[j]))
						ms, vs := 1.0, 1.0
						if s > M {
							mold := M
							M = s
							ms = float64(float32(math.Exp(mold - M)))
							for i := range acc {
								acc[i] = f16(acc[i] * ms)
							}
						} else {
							vs = float64(float32(math.Exp(s - M)))
						}
						for i := range acc {
							acc[i] = f16(acc[i] + kv[l].v[j][kh*hd+i]*vs)
						}
						S = S*ms + vs
					}
					for i := range hd {
						att[hh*hd+i] = acc[i] / S
					}
					continue
				}
				var z float64
				for j := first; j < len(sc); j++ {
					sc[j] = math.Exp(sc[j] - mx)
					z += sc[j]
				}
				for j := first; j < len(sc); j++ {
					pj := sc[j] / z
					if r.half.p {
						pj = f16(pj)
					}
					for i := range hd {
						att[hh*hd+i] += pj * kv[l].v[j][kh*hd+i]
					}
				}
			}
			o := matvec(r.w(t, p+"attn_output.weight"), att, ne)
			addTo(x, norm(o, p+"post_attention_norm.weight"))
			xn = norm(x, p+"ffn_norm.weight")
			u := matvec(r.w(t, p+"ffn_up.weight"), xn, h.NFF)
			act := make([]float64, h.NFF)
			gelu := func(v float64) float64 { return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v))) }
			switch r.a.FFN {
			case FFNGELU:
				for i, v := range u {
					act[i] = gelu(v)
				}
			default:
				g := matvec(r.w(t, p+"ffn_gate.weight"), xn, h.NFF)
				for i, v := range g {
					if r.a.FFN == FFNGELUGated {
						act[i] = gelu(v) * u[i]
					} else {
						act[i] = v / (1 + math.Exp(-v)) * u[i]
					}
				}
			}
			addTo(x, norm(matvec(r.w(t, p+"ffn_down.weight"), act, ne), p+"post_ffw_norm.weight"))
		}
		xn := rmsnorm(x, r.w(t, "output_norm.weight"), float64(h.Eps))
		all = append(all, matvec(outW, xn, h.NVocab))
	}
	return all
}

func maxDiff64(a []float32, b []float64) (d, mag float64) {
	for i := range b {
		d = max(d, math.Abs(float64(a[i])-b[i]))
		mag = max(mag, math.Abs(b[i]))
	}
	return d, mag
}

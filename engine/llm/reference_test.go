package llm

import (
	"fmt"
	"math"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/stretchr/testify/require"
)

// refModel is an independent float64 forward pass over f32 weights, the
// textbook formulation of the three families, used to check the plan.
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
	v := bytesF32(tn.Data)
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
		factors = bytesF32(tn.Data)
	}
	fr32, err := ropeFreqs(h, factors)
	require.NoError(t, err)
	type layerKV struct{ k, v [][]float64 } // [pos][kvd]
	kv := make([]layerKV, h.NLayer)
	var all [][]float64
	rope := func(v []float64, pos int) {
		half := h.RopeDim / 2
		for i := range half {
			ang := float64(pos) * float64(fr32[i])
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
		for l := range h.NLayer {
			p := fmt.Sprintf("blk.%d.", l)
			xn := rmsnorm(x, r.w(t, p+"attn_norm.weight"), float64(h.Eps))
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
				rope(qh, pos)
			}
			for hh := range h.NKV {
				kh := k[hh*hd : (hh+1)*hd]
				if r.a.QKNorm {
					copy(kh, rmsnorm(kh, r.w(t, p+"attn_k_norm.weight"), float64(h.Eps)))
				}
				rope(kh, pos)
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
				for j := range sc {
					sc[j] = math.Exp(sc[j] - mx)
					z += sc[j]
				}
				for j := range sc {
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
			addTo(x, o)
			xn = rmsnorm(x, r.w(t, p+"ffn_norm.weight"), float64(h.Eps))
			g := matvec(r.w(t, p+"ffn_gate.weight"), xn, h.NFF)
			u := matvec(r.w(t, p+"ffn_up.weight"), xn, h.NFF)
			for i := range g {
				g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
			}
			addTo(x, matvec(r.w(t, p+"ffn_down.weight"), g, ne))
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

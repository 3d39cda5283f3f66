package msltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// TestRopeAttentionMatVecKernel: RopeAttentionMatVec (rope_attention_mat_vec.metal:
// decode attention with the output product folded in by heads, Tuning.AttnFoldO)
// against the CPU and a float64 reference, under the cuda family (folded,
// 8 slices of Wo's rows, and with one slice, where the cache is at most
// AttnGroupKeys keys; past that the ticket split
// and rope_attention_mat_vec_o), the cuda family with the fold off and
// Default (the attention's launches, then rope_attention_mat_vec_o): the
// att row to the CPU's within attention's tolerance, x to x + Σ W·att in
// float64 over the executor's own att row (the GPU multiplies float
// activations; the CPU quantizes them for quantized weights), the caches
// to the CPU's. Weights f32, f16, q8_0 and q4_0 (repacked under the cuda
// family; also the cuda family in the file's layout without 16-byte
// loads), a bias or none, heads of 64, 80 and 8 dims (a head's columns
// inside a 16-element chunk), 1 to 1500 keys. A folded launch run twice
// leaves x bit for bit the same (the partials are added in head order),
// and its ticket word zero (the executor checks).
func TestRopeAttentionMatVecKernel(t *testing.T) {
	cuda := shaders.TuningFor("cuda")
	cuda.Cores = 132
	off := cuda
	off.Family, off.AttnFoldO = "cuda-fold-off", 1
	plain := cuda // the file's layout and element-aligned K rows
	plain.Family, plain.Repack, plain.Align16 = "cuda-file-layout", 1, 1
	one := cuda // round 11's threadgroup a head (the family's: 8 slices of Wo's rows)
	one.Family, one.AttnFoldSlices = "cuda-one-slice", 1
	def := shaders.Default
	defer func() { kitTune = nil }()
	type tcase struct {
		hd, nHead, nKV, kvLen int
		ty                    ggml.Type
		bias                  bool
	}
	cases := []tcase{
		{hd: 64, nHead: 9, nKV: 3, kvLen: 1, ty: ggml.Q8_0},
		{hd: 64, nHead: 9, nKV: 3, kvLen: 20, ty: ggml.Q8_0, bias: true},
		{hd: 64, nHead: 9, nKV: 3, kvLen: 129, ty: ggml.Q4_0},
		{hd: 64, nHead: 9, nKV: 3, kvLen: 700, ty: ggml.F16},
		{hd: 64, nHead: 4, nKV: 2, kvLen: 1500, ty: ggml.Q8_0},
		{hd: 80, nHead: 4, nKV: 2, kvLen: 90, ty: ggml.F32, bias: true},
		{hd: 8, nHead: 8, nKV: 4, kvLen: 45, ty: ggml.F32},
		{hd: 8, nHead: 8, nKV: 4, kvLen: 33, ty: ggml.F16},
	}
	if testing.Short() {
		cases = cases[:4]
	}
	used := map[string]map[string]bool{}
	for ti, tune := range []*shaders.Tuning{&cuda, &off, &plain, &one, &def} {
		used[tune.Family] = map[string]bool{}
		for ci, c := range cases {
			r := rand.New(rand.NewPCG(34, uint64(100*ti+ci)))
			n := c.nHead * c.hd
			w := (c.nHead + 2*c.nKV) * c.hd
			npos := c.kvLen
			ps, hs := c.hd, npos*c.hd
			qkv := kitF32(kitRand(r, w, 1))
			kc, vc := kitF16(kitRand(r, c.nKV*hs, 1)), kitF16(kitRand(r, c.nKV*hs, 1))
			freqs := kitF32(ropeFreqs(c.hd, 10000))
			x := kitRand(r, n, 1)
			var bias []float32
			if c.bias {
				bias = kitRand(r, n, 0.1)
			}
			wo, deq := randWeightsK(t, r, c.ty, n, n)
			a := plan.RopeAttentionMatVecArgs{Type: c.ty, HeadDim: c.hd, NHead: c.nHead, NKV: c.nKV, M: 1, Ldq: w, Ldo: n,
				KVLen: c.kvLen, Pos0: c.kvLen - 1, Flags: plan.FlagCausal, Scale: float32(1 / math.Sqrt(float64(c.hd))),
				HeadStride: hs, PosStride: ps, Mode: plan.RopeNeoX}
			init := ramvInit{qkv: qkv, k: kc, v: vc, freqs: freqs, w: wo, x: kitF32(x), bias: bias}
			kitTune = tune
			ref := ramvRun(t, cpu.New(cpu.Options{Pool: kitPool}), a, init, nil)
			got := ramvRun(t, kitBackend(t), a, init, used[tune.Family])
			what := tune.Family + " " + c.ty.String()
			kitCompare(t, ggml.BytesF32(ref.att), ggml.BytesF32(got.att), 2e-5, what+": att")
			require.Equal(t, ref.v, got.v, "%s: V cache", what)
			kitCompare(t, kitAsF16(ref.k), kitAsF16(got.k), 1e-3, what+": K cache")
			// x + att·Woᵀ + bias in float64 over the executor's att, to
			// ~1e-6 of the terms' magnitude
			att := ggml.BytesF32(got.att)
			gx := ggml.BytesF32(got.x)
			for row := range n {
				s, mag := float64(x[row]), math.Abs(float64(x[row]))
				if bias != nil {
					s += float64(bias[row])
					mag += math.Abs(float64(bias[row]))
				}
				for e := range n {
					p := float64(deq[row*n+e]) * float64(att[e])
					s += p
					mag += math.Abs(p)
				}
				require.InDelta(t, s, float64(gx[row]), 2e-6*mag+1e-7, "%s %d keys hd %d: x[%d]", what, c.kvLen, c.hd, row)
			}
			again := ramvRun(t, kitBackend(t), a, init, nil)
			require.Equal(t, got.x, again.x, "%s: x differs between two runs", what)
		}
	}
	has := func(fam, prefix string) bool {
		for f := range used[fam] {
			if strings.HasPrefix(f, prefix) {
				return true
			}
		}
		return false
	}
	// every weight layout folded: f32 0, f16 1, q8_0 2, q4_0 3, repacked
	// q8_0 4 and q4_0 5 (the cuda family's)
	for _, f := range []string{"rope_attention_mat_vec_a16/w4", "rope_attention_mat_vec_a16/w5", "rope_attention_mat_vec_o_f16_a16"} {
		require.True(t, used["cuda"][f], "the cuda family ran no %s: %v", f, used["cuda"])
	}
	require.True(t, used["cuda-file-layout"]["rope_attention_mat_vec/w1"], "the file's layout folded no f16: %v", used["cuda-file-layout"])
	for _, f := range []string{"rope_attention_mat_vec/w2", "rope_attention_mat_vec/w3"} {
		require.True(t, used["cuda-file-layout"][f], "the file's layout ran no %s: %v", f, used["cuda-file-layout"])
	}
	require.True(t, used["cuda-one-slice"]["rope_attention_mat_vec_a16/w4"], "one slice folded nothing: %v", used["cuda-one-slice"])
	for _, fam := range []string{"cuda-fold-off", "default"} {
		require.True(t, has(fam, "rope_attention_mat_vec_o_"), "%s ran no rope_attention_mat_vec_o: %v", fam, used[fam])
		for f := range used[fam] {
			require.False(t, strings.HasPrefix(f, "rope_attention_mat_vec") && !strings.HasPrefix(f, "rope_attention_mat_vec_o_"),
				"%s folded (%s) with the fold off", fam, f)
		}
	}
	if !testing.Short() { // the f32 cases (heads of 80 and 8: K rows not 16-byte words) and 1500 keys
		require.True(t, used["cuda"]["rope_attention_mat_vec/w0"], "the cuda family ran no f32 case: %v", used["cuda"])
		require.True(t, has("cuda", "rope_attention_ticket_f16"), "1500 keys under the cuda family: the ticket split, %v", used["cuda"])
	}
	t.Logf("ran %v", used)
}

type ramvInit struct {
	qkv, k, v, freqs, w, x []byte
	bias                   []float32
}

type ramvOut struct{ att, k, v, x []byte }

// ramvRun runs a on be with W as a weights buffer (so a repacking tuning
// repacks it) and att poisoned; fns, when set, records the launches'
// functions under kitTune (or Default).
func ramvRun(t testing.TB, be plan.Backend, a plan.RopeAttentionMatVecArgs, in ramvInit, fns map[string]bool) ramvOut {
	t.Helper()
	var p plan.Plan
	p.Name = t.Name()
	pass, _ := p.AddPass("main")
	var writes []func(x plan.Executable)
	io := func(b []byte) plan.Binding {
		id := p.AddBuffer(plan.Buffer{Name: "b", Kind: plan.IO, Size: int64(len(b))})
		writes = append(writes, func(x plan.Executable) { require.NoError(t, x.Write(id, 0, b)) })
		return plan.Binding{Buf: id}
	}
	n := a.NHead * a.HeadDim
	a.Q, a.K, a.V, a.Freqs, a.Out = io(in.qkv), io(in.k), io(in.v), io(in.freqs), io(in.x)
	a.Att = io(kitF32(kitNaNs(n)))
	a.Bias = plan.None
	if in.bias != nil {
		a.Bias = io(kitF32(in.bias))
	}
	a.W = plan.Binding{Buf: p.AddBuffer(plan.Buffer{Name: "wo", Kind: plan.BufWeights, Size: int64(len(in.w)), Data: in.w})}
	d := a.Dispatch()
	pass.Add(d)
	if fns != nil {
		tune := &shaders.Default
		if kitTune != nil {
			tune = kitTune
		}
		ls, err := shaders.LaunchFor(&d, tune, nil)
		require.NoError(t, err)
		require.NoError(t, shaders.ForLayouts(shaders.Layouts(&p, tune), &d, ls))
		for _, l := range ls {
			name := l.Function
			for _, c := range l.Constants {
				if c.Index == 23 { // the folded launch's weights (RAMV_* codes)
					name += fmt.Sprintf("/w%d", c.Value)
				}
			}
			fns[name] = true
		}
	}
	x, err := be.Load(&p)
	require.NoError(t, err)
	defer x.Close()
	for _, w := range writes {
		w(x)
	}
	require.NoError(t, x.Run(0, &plan.Vars{}), be.Name())
	read := func(b plan.Binding, size int) []byte {
		out := make([]byte, size)
		require.NoError(t, x.Read(b.Buf, 0, out))
		return out
	}
	return ramvOut{att: read(a.Att, 4*n), k: read(a.K, len(in.k)), v: read(a.V, len(in.v)), x: read(a.Out, len(in.x))}
}

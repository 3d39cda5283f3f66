package llm

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
)

// tinySpec describes a random model written with gguf's Writer.
type tinySpec struct {
	arch      string
	headDim   int // attention.key_length (0: embd/heads)
	tied      bool
	scaling   string // rope.scaling.type
	ropeFreqs bool   // a rope_freqs.weight tensor
	drop      string // a tensor left out
	badShape  string // a tensor one element too wide
	upFirst   bool   // ffn_up written before ffn_gate (the pair is stacked, not a span)
	nameOrder bool   // tensors written sorted by name, as llama.cpp's converter does
	extraKV   map[string]gguf.Value
}

// tinyWindow is the sliding window of tiny models whose descriptor has one.
const tinyWindow = 3

const (
	tinyVocab = 96
	tinyEmbd  = 32
	tinyHeads = 4
	tinyKV    = 2
	tinyFF    = 48
	tinyLayer = 2
	tinyCtx   = 64
)

func tinyModel(t *testing.T, s tinySpec) *gguf.File {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, uint64(len(s.arch))))
	hd := s.headDim
	if hd == 0 {
		hd = tinyEmbd / tinyHeads
	}
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	kv := func(k string, v gguf.Value) {
		if x, ok := s.extraKV[k]; ok {
			v = x // the spec overrides the default
		}
		require.NoError(t, w.AddKV(k, v))
	}
	a := s.arch
	desc := archs[a] // the tensors follow the descriptor (an unknown arch gets Llama's)
	kv("general.architecture", gguf.String(a))
	if desc.SlidingPattern > 0 {
		kv(a+".attention.sliding_window", gguf.Uint32(tinyWindow))
	}
	kv(a+".block_count", gguf.Uint32(tinyLayer))
	kv(a+".embedding_length", gguf.Uint32(tinyEmbd))
	kv(a+".feed_forward_length", gguf.Uint32(tinyFF))
	kv(a+".attention.head_count", gguf.Uint32(tinyHeads))
	kv(a+".attention.head_count_kv", gguf.Uint32(tinyKV))
	kv(a+".attention.layer_norm_rms_epsilon", gguf.Float32(1e-6))
	kv(a+".context_length", gguf.Uint32(tinyCtx))
	kv(a+".rope.freq_base", gguf.Float32(1e6))
	if s.headDim != 0 {
		kv(a+".attention.key_length", gguf.Uint32(uint32(hd)))
		kv(a+".attention.value_length", gguf.Uint32(uint32(hd)))
	}
	if s.scaling != "" {
		kv(a+".rope.scaling.type", gguf.String(s.scaling))
		kv(a+".rope.scaling.factor", gguf.Float32(4))
		kv(a+".rope.scaling.original_context_length", gguf.Uint32(16))
	}
	type tensor struct {
		name  string
		shape []int64
		data  []float32
	}
	var ts []tensor
	add := func(name string, scale, center float32, shape ...int64) {
		if name == s.drop {
			return
		}
		if name == s.badShape {
			shape = append([]int64{shape[0] + 1}, shape[1:]...)
		}
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		d := make([]float32, n)
		for i := range d {
			d[i] = center + scale*float32(rng.NormFloat64())
		}
		ts = append(ts, tensor{name, shape, d})
	}
	qd, kvd := int64(tinyHeads*hd), int64(tinyKV*hd)
	add("token_embd.weight", 0.5, 0, tinyEmbd, tinyVocab)
	add("output_norm.weight", 0.1, 1, tinyEmbd)
	if !s.tied {
		add("output.weight", 0.3, 0, tinyEmbd, tinyVocab)
	}
	if s.ropeFreqs {
		add("rope_freqs.weight", 0.5, 2, int64(hd/2))
	}
	for l := range tinyLayer {
		p := fmt.Sprintf("blk.%d.", l)
		if desc.NormAt.pre() {
			add(p+"attn_norm.weight", 0.1, 1, tinyEmbd)
		}
		add(p+"attn_q.weight", 0.3, 0, tinyEmbd, qd)
		add(p+"attn_k.weight", 0.3, 0, tinyEmbd, kvd)
		add(p+"attn_v.weight", 0.3, 0, tinyEmbd, kvd)
		if a == "qwen2" {
			add(p+"attn_q.bias", 0.2, 0, qd)
			add(p+"attn_k.bias", 0.2, 0, kvd)
			add(p+"attn_v.bias", 0.2, 0, kvd)
		}
		if desc.QKNorm {
			add(p+"attn_q_norm.weight", 0.1, 1, int64(hd))
			add(p+"attn_k_norm.weight", 0.1, 1, int64(hd))
		}
		add(p+"attn_output.weight", 0.3, 0, qd, tinyEmbd)
		if desc.NormAt.post() {
			add(p+"post_attention_norm.weight", 0.1, 1, tinyEmbd)
			add(p+"post_ffw_norm.weight", 0.1, 1, tinyEmbd)
		}
		if desc.NormAt.pre() {
			add(p+"ffn_norm.weight", 0.1, 1, tinyEmbd)
		}
		if s.upFirst {
			add(p+"ffn_up.weight", 0.3, 0, tinyEmbd, tinyFF)
		}
		if desc.FFN != FFNGELU {
			add(p+"ffn_gate.weight", 0.3, 0, tinyEmbd, tinyFF)
		}
		if !s.upFirst {
			add(p+"ffn_up.weight", 0.3, 0, tinyEmbd, tinyFF)
		}
		add(p+"ffn_down.weight", 0.3, 0, tinyFF, tinyEmbd)
	}
	if s.nameOrder {
		slices.SortStableFunc(ts, func(a, b tensor) int { return strings.Compare(a.name, b.name) })
	}
	for _, x := range ts {
		require.NoError(t, w.AddTensor(x.name, ggml.F32, x.shape))
	}
	for _, x := range ts {
		require.NoError(t, w.WriteTensor(ggml.F32Bytes(x.data)))
	}
	require.NoError(t, w.Close())
	f, err := gguf.Parse(buf.Bytes())
	require.NoError(t, err)
	return f
}

func tinyTokens(n int) []int32 {
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(rng.IntN(tinyVocab))
	}
	return out
}

// testArchs are descriptors no file family uses yet, for the blocks only
// they choose: post-norms, a plain GELU FFN, a sliding window every other
// layer with its own RoPE base.
var testArchs = map[string]Arch{
	"test-post-gelu": {Name: "test-post-gelu", NormAt: NormPost, FFN: FFNGELU, RopeMode: plan.RopeNeoX,
		SlidingPattern: 2, LocalRopeBase: 500, Tensors: llamaCppNames},
}

// withTestArchs registers testArchs for the test.
func withTestArchs(t *testing.T) {
	for n, a := range testArchs {
		archs[n] = a
		t.Cleanup(func() { delete(archs, n) })
	}
}

// TestTinyModels builds random llama, qwen2, qwen3, gemma3 and test-arch
// files and holds the plan (decode and chunked prefill) to the float64
// forward pass; a second run must give bit-identical logits.
func TestTinyModels(t *testing.T) {
	withTestArchs(t)
	for _, s := range []tinySpec{
		{arch: "llama"},
		{arch: "llama", tied: true, scaling: "linear"},
		{arch: "llama", scaling: "llama3"},
		{arch: "llama", ropeFreqs: true},
		{arch: "llama", upFirst: true},
		{arch: "llama", nameOrder: true},
		{arch: "qwen2", nameOrder: true},
		{arch: "qwen2"},
		{arch: "qwen3", headDim: 12},
		{arch: "qwen3", headDim: 6, tied: true},
		{arch: "gemma3", tied: true},
		{arch: "gemma3", headDim: 12, tied: true},
		{arch: "test-post-gelu"},
	} {
		name := fmt.Sprintf("%s/tied=%v/scaling=%s/freqs=%v/hd=%d/upFirst=%v/nameOrder=%v", s.arch, s.tied, s.scaling, s.ropeFreqs, s.headDim, s.upFirst, s.nameOrder)
		t.Run(name, func(t *testing.T) {
			f := tinyModel(t, s)
			m, err := Load(newCPU(t), f, Options{Batch: 5, F32Cache: true})
			require.NoError(t, err)
			defer m.Close()
			r := &refModel{a: m.Arch, h: m.H, f: f}
			toks := tinyTokens(23)
			want := r.logits(t, toks)
			var first [][]float32
			for run := range 2 {
				m.Reset()
				for i, tok := range toks {
					lg, err := m.Decode(tok)
					require.NoError(t, err)
					d, mag := maxDiff64(lg, want[i])
					require.LessOrEqual(t, d, 1e-5*mag, "row %d", i)
					if run == 0 {
						first = append(first, append([]float32(nil), lg...))
					} else {
						require.Equal(t, first[i], lg, "row %d differs between runs", i)
					}
				}
			}
			// Prefill in chunks of 5 after a decoded prefix.
			m.Reset()
			_, err = m.Decode(toks[0])
			require.NoError(t, err)
			lg, err := m.Prefill(toks[1:])
			require.NoError(t, err)
			d, mag := maxDiff64(lg, want[len(toks)-1])
			require.LessOrEqual(t, d, 1e-5*mag)
			require.Equal(t, len(toks), m.Pos())

			// The default f16 cache stays close.
			m16, err := Load(newCPU(t), f, Options{})
			require.NoError(t, err)
			defer m16.Close()
			lg, err = m16.Prefill(toks)
			require.NoError(t, err)
			d, mag = maxDiff64(lg, want[len(toks)-1])
			require.LessOrEqual(t, d, 5e-3*mag)
		})
	}
}

func TestReadHParams(t *testing.T) {
	f := tinyModel(t, tinySpec{arch: "qwen3", headDim: 12})
	a, err := LookupArch(f.Architecture())
	require.NoError(t, err)
	require.True(t, a.QKNorm)
	require.Equal(t, plan.RopeNeoX, a.RopeMode)
	h, err := ReadHParams(f, a)
	require.NoError(t, err)
	require.Equal(t, HParams{NLayer: tinyLayer, NEmbd: tinyEmbd, NFF: tinyFF, NHead: tinyHeads, NKV: tinyKV, HeadDim: 12,
		NVocab: tinyVocab, NCtx: tinyCtx, Eps: 1e-6, RopeBase: 1e6, RopeDim: 12,
		Scaling: RopeScaling{OrigCtx: 8192, LowFreqFactor: 1, HighFreqFactor: 4}}, h)
	require.Equal(t, 48, h.QDim())

	a2, err := LookupArch("qwen2")
	require.NoError(t, err)
	require.True(t, a2.QKVBias)
	require.False(t, a2.AddBOS)
	l, err := LookupArch("llama")
	require.NoError(t, err)
	require.Equal(t, plan.RopeNormal, l.RopeMode)
	require.True(t, l.AddBOS)
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct {
		spec tinySpec
		msg  string
	}{
		{tinySpec{arch: "gemma2"}, `architecture "gemma2" is not supported`},
		{tinySpec{arch: "qwen2", drop: "blk.1.attn_k.bias"}, `missing tensor blk.1.attn_k.bias`},
		{tinySpec{arch: "qwen3", drop: "blk.0.attn_q_norm.weight"}, `missing tensor blk.0.attn_q_norm.weight`},
		{tinySpec{arch: "llama", drop: "blk.0.ffn_up.weight"}, `missing tensor blk.0.ffn_up.weight`},
		{tinySpec{arch: "gemma3", drop: "blk.1.post_ffw_norm.weight"}, `llm: the gemma3 weights do not match the file: missing tensor blk.1.post_ffw_norm.weight`},
		{tinySpec{arch: "gemma3", badShape: "blk.0.attn_k_norm.weight"}, `tensor blk.0.attn_k_norm.weight has shape [9], want [8]`},
		{tinySpec{arch: "gemma3", tied: true, drop: "token_embd.weight"}, `token_embd.weight`},
		{tinySpec{arch: "gemma3", extraKV: map[string]gguf.Value{"gemma3.attention.sliding_window": gguf.Uint32(0)}}, "sliding window of 0"},
		{tinySpec{arch: "llama", scaling: "yarn"}, `rope scaling "yarn" is not supported`},
		{tinySpec{arch: "llama", extraKV: map[string]gguf.Value{"llama.attention.head_count_kv": gguf.Uint32(3)}}, "cannot share"},
	} {
		f := tinyModel(t, c.spec)
		_, err := Load(newCPU(t), f, Options{})
		require.ErrorContains(t, err, c.msg)
	}
	// every mismatch is reported at once, each by name
	f := tinyModel(t, tinySpec{arch: "gemma3", drop: "blk.0.ffn_up.weight", badShape: "blk.1.attn_q.weight"})
	_, err := Load(newCPU(t), f, Options{})
	require.ErrorContains(t, err, "missing tensor blk.0.ffn_up.weight")
	require.ErrorContains(t, err, "tensor blk.1.attn_q.weight has shape [33 32], want [32 32]")
}

func TestContextFull(t *testing.T) {
	f := tinyModel(t, tinySpec{arch: "llama"})
	m, err := Load(newCPU(t), f, Options{Context: 8})
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, 8, m.Context())
	_, err = m.Prefill(tinyTokens(9))
	require.ErrorIs(t, err, ErrContextFull)
	require.Equal(t, 0, m.Pos(), "a rejected prefill leaves the context unchanged")
	_, err = m.Prefill(tinyTokens(8))
	require.NoError(t, err)
	_, err = m.Decode(1)
	require.ErrorIs(t, err, ErrContextFull)
	_, err = m.Decode(tinyVocab)
	require.Error(t, err)
	m.Reset()
	_, err = m.Decode(1)
	require.NoError(t, err)
}

func TestRopeFreqs(t *testing.T) {
	h := HParams{RopeBase: 10000, RopeDim: 8}
	f, err := ropeFreqs(h, nil)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float32{1, 0.1, 0.01, 0.001}, f, 1e-7)

	h.Scaling = RopeScaling{Type: "linear", Factor: 4}
	f, err = ropeFreqs(h, nil)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float32{0.25, 0.025, 0.0025, 0.00025}, f, 1e-8)

	// llama3: wavelengths 2π/f = 6.3, 63, 628, 6283 against an original
	// context of 1000 with factors 1 and 4: below 250 kept, above 1000
	// divided, in between interpolated.
	h.Scaling = RopeScaling{Type: "llama3", Factor: 8, OrigCtx: 1000, LowFreqFactor: 1, HighFreqFactor: 4}
	f, err = ropeFreqs(h, nil)
	require.NoError(t, err)
	smooth := (1000/(2*math.Pi/0.01) - 1) / 3
	require.InDeltaSlice(t, []float32{1, 0.1, float32((1-smooth)*0.01/8 + smooth*0.01), 0.001 / 8}, f, 1e-8)

	// rope_freqs.weight factors divide, and win over metadata.
	f, err = ropeFreqs(h, []float32{1, 2, 4, 8})
	require.NoError(t, err)
	require.InDeltaSlice(t, []float32{1, 0.05, 0.0025, 0.000125}, f, 1e-9)
	_, err = ropeFreqs(h, []float32{1})
	require.Error(t, err)
}

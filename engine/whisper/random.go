package whisper

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/ggmlbin"
)

// Synthetic models: every tensor of a Whisper model of any shape, filled
// with seeded pseudo-random values and written in whisper.cpp's format.
// They stand in for model sizes and variants whose real weights cannot be
// downloaded here (multilingual vocabularies, 128 mel bins, turbo's shallow
// decoder, large dimensions for benchmarks); an independent implementation
// loads the same file to produce reference outputs.

// RandomSpec describes a synthetic model.
type RandomSpec struct {
	H    HParams
	Seed uint64
	// Vocab holds the regular tokens (the tiktoken ranks' bytes).
	Vocab []string
	// Mel is the filter bank stored in the file ([NMels][201]).
	Mel []float32
	// Weight is the type of 2-D weights (f16 or f32), as whisper.cpp's
	// converter writes them; biases, norms and positional embeddings are f32.
	Weight ggml.Type
}

type randTensor struct {
	name  string
	shape []int64 // ggml order
	twoD  bool    // stored in the weight type
	kind  int     // how values are drawn
}

const (
	drawWeight = iota // uniform, std 1/sqrt(fan-in)
	drawBias
	drawGain // 1 + small
	drawEmbed
	drawPos
)

func randomTensors(h HParams) []randTensor {
	na, nt := int64(h.NAudioState), int64(h.NTextState)
	var ts []randTensor
	add := func(name string, kind int, twoD bool, shape ...int64) {
		ts = append(ts, randTensor{name, shape, twoD, kind})
	}
	block := func(pre string, n int64, cross bool) {
		attn := func(p string) {
			add(p+".query.weight", drawWeight, true, n, n)
			add(p+".query.bias", drawBias, false, n)
			add(p+".key.weight", drawWeight, true, n, n)
			add(p+".value.weight", drawWeight, true, n, n)
			add(p+".value.bias", drawBias, false, n)
			add(p+".out.weight", drawWeight, true, n, n)
			add(p+".out.bias", drawBias, false, n)
		}
		attn(pre + "attn")
		add(pre+"attn_ln.weight", drawGain, false, n)
		add(pre+"attn_ln.bias", drawBias, false, n)
		if cross {
			attn(pre + "cross_attn")
			add(pre+"cross_attn_ln.weight", drawGain, false, n)
			add(pre+"cross_attn_ln.bias", drawBias, false, n)
		}
		add(pre+"mlp.0.weight", drawWeight, true, n, 4*n)
		add(pre+"mlp.0.bias", drawBias, false, 4*n)
		add(pre+"mlp.2.weight", drawWeight, true, 4*n, n)
		add(pre+"mlp.2.bias", drawBias, false, n)
		add(pre+"mlp_ln.weight", drawGain, false, n)
		add(pre+"mlp_ln.bias", drawBias, false, n)
	}
	add("encoder.positional_embedding", drawPos, false, na, int64(h.NAudioCtx))
	add("encoder.conv1.weight", drawWeight, true, 3, int64(h.NMels), na)
	add("encoder.conv1.bias", drawBias, false, 1, na)
	add("encoder.conv2.weight", drawWeight, true, 3, na, na)
	add("encoder.conv2.bias", drawBias, false, 1, na)
	for l := range h.NAudioLayer {
		block(fmt.Sprintf("encoder.blocks.%d.", l), na, false)
	}
	add("encoder.ln_post.weight", drawGain, false, na)
	add("encoder.ln_post.bias", drawBias, false, na)
	add("decoder.positional_embedding", drawPos, false, nt, int64(h.NTextCtx))
	add("decoder.token_embedding.weight", drawEmbed, true, nt, int64(h.NVocab))
	for l := range h.NTextLayer {
		block(fmt.Sprintf("decoder.blocks.%d.", l), nt, true)
	}
	add("decoder.ln.weight", drawGain, false, nt)
	add("decoder.ln.bias", drawBias, false, nt)
	return ts
}

// splitmix64 is the generator; every tensor gets its own stream from the
// seed and its name, so values do not depend on tensor order.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9E3779B97F4A7C15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// uniform in [-1, 1) with 24 bits.
func (s *splitmix64) uniform() float32 { return float32(s.next()>>40)/(1<<23) - 1 }

func tensorStream(seed uint64, name string) splitmix64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return splitmix64(seed ^ h.Sum64())
}

func (t randTensor) values(seed uint64) []float32 {
	n := int64(1)
	for _, d := range t.shape {
		n *= d
	}
	fanIn := float32(t.shape[0])
	if len(t.shape) == 3 { // conv: kernel width × input channels
		fanIn = float32(t.shape[0] * t.shape[1])
	}
	rng := tensorStream(seed, t.name)
	out := make([]float32, n)
	// Uniform(-a, a) has std a/sqrt(3).
	for i := range out {
		u := rng.uniform()
		switch t.kind {
		case drawWeight:
			out[i] = u * float32(math.Sqrt(3)) / float32(math.Sqrt(float64(fanIn)))
		case drawBias:
			out[i] = 0.1 * u
		case drawGain:
			out[i] = 1 + 0.2*u
		case drawEmbed:
			// Large enough that logits spread over tens of units, so the
			// argmax is not decided by rounding.
			out[i] = 0.5 * u
		case drawPos:
			out[i] = 0.3 * u
		}
	}
	return out
}

// WriteRandom writes a synthetic model in whisper.cpp's format.
func WriteRandom(w io.Writer, spec RandomSpec) error {
	h := spec.H
	if err := h.Validate(); err != nil {
		return err
	}
	if spec.Weight != ggml.F16 && spec.Weight != ggml.F32 {
		return fmt.Errorf("whisper: random weights must be f16 or f32, not %s", spec.Weight)
	}
	if len(spec.Mel) != h.NMels*201 {
		return fmt.Errorf("whisper: %d mel filter values, want %d×201", len(spec.Mel), h.NMels)
	}
	ftype := int32(0)
	if spec.Weight == ggml.F16 {
		ftype = 1
	}
	hp := ggmlbin.HParams{NVocab: int32(h.NVocab), NAudioCtx: int32(h.NAudioCtx), NAudioState: int32(h.NAudioState),
		NAudioHead: int32(h.NAudioHead), NAudioLayer: int32(h.NAudioLayer), NTextCtx: int32(h.NTextCtx),
		NTextState: int32(h.NTextState), NTextHead: int32(h.NTextHead), NTextLayer: int32(h.NTextLayer),
		NMels: int32(h.NMels), FType: ftype}
	wr, err := ggmlbin.NewWriter(w, hp, ggmlbin.MelFilters{NMel: int32(h.NMels), NFFT: 201, Data: spec.Mel}, spec.Vocab)
	if err != nil {
		return err
	}
	for _, t := range randomTensors(h) {
		vals := t.values(spec.Seed)
		typ := ggml.F32
		if t.twoD {
			typ = spec.Weight
		}
		var data []byte
		if typ == ggml.F16 {
			data = make([]byte, 2*len(vals))
			for i, v := range vals {
				binary.LittleEndian.PutUint16(data[2*i:], ggml.FP32ToFP16(v))
			}
		} else {
			data = make([]byte, 4*len(vals))
			for i, v := range vals {
				binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
			}
		}
		if err := wr.WriteTensor(t.name, typ, t.shape, data); err != nil {
			return err
		}
	}
	return wr.Close()
}

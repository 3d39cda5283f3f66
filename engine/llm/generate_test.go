package llm

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/engine/tokenizer"
)

func storiesGenerator(t *testing.T, opt Options) (*Generator, *gguf.File) {
	t.Helper()
	f := openStories(t)
	tk, err := tokenizer.FromGGUFFile(f)
	require.NoError(t, err)
	m, err := Load(newCPU(t), f, opt)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return NewGenerator(m, tk), f
}

// TestGeneratorGolden: prompt text -> BOS + tokens -> 64 greedy tokens and
// the streamed continuation, all as llama.cpp produced them.
func TestGeneratorGolden(t *testing.T) {
	gold, _ := loadGolden(t)
	g, f := storiesGenerator(t, Options{})
	require.True(t, AddBOS(f, g.M.Arch))
	for _, r := range gold.Results {
		g.M.Reset()
		prompt := g.PromptTokens(r.Prompt, AddBOS(f, g.M.Arch))
		require.Equal(t, r.PromptTokens, prompt)
		var streamed strings.Builder
		res, err := g.Generate(context.Background(), prompt, GenerateOptions{MaxTokens: 64},
			func(s string) error { streamed.WriteString(s); return nil })
		require.NoError(t, err)
		require.Equal(t, StopMaxTokens, res.Reason)
		require.Equal(t, r.GeneratedTokens, res.Tokens, "prompt %q", r.Prompt)
		require.Equal(t, r.GeneratedText, res.Text, "prompt %q", r.Prompt)
		require.Equal(t, res.Text, streamed.String())
	}
}

// TestSamplingOnBackend: the plan's Sample pass and the host sampler draw
// the same tokens; the seed matters and reproduces.
func TestSamplingOnBackend(t *testing.T) {
	smp := Sampler{Temperature: 0.9, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.1, PresencePenalty: 0.1,
		FrequencyPenalty: 0.05, Seed: 42}
	gb, _ := storiesGenerator(t, Options{Sampler: &smp})
	gh, _ := storiesGenerator(t, Options{})
	prompt := gb.PromptTokens("Lily wanted to play", true)
	run := func(g *Generator, s Sampler) Result {
		g.M.Reset()
		r, err := g.Generate(context.Background(), prompt, GenerateOptions{Sampler: s, MaxTokens: 48}, nil)
		require.NoError(t, err)
		return r
	}
	a := run(gb, smp)
	b := run(gh, smp)
	require.Equal(t, a.Tokens, b.Tokens)
	require.Equal(t, a.Text, b.Text)
	require.Equal(t, a.Tokens, run(gb, smp).Tokens, "same seed, same tokens")
	s2 := smp
	s2.Seed = 43
	require.NotEqual(t, a.Tokens, run(gb, s2).Tokens, "another seed draws other tokens")
	// A sampler other than the plan's falls back to the host.
	require.Equal(t, run(gh, s2).Tokens, run(gb, s2).Tokens)
}

// TestHostSamplerMatchesKernel runs the Sample kernel of the CPU backend
// and the host sampler on the same random logits.
func TestHostSamplerMatchesKernel(t *testing.T) {
	const n = 300
	p := &plan.Plan{Name: "sample"}
	x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: 4 * n})
	out := p.AddBuffer(plan.Buffer{Name: "out", Kind: plan.IO, Size: 4})
	hist := p.AddBuffer(plan.Buffer{Name: "hist", Kind: plan.IO, Size: 4 * 32})
	scr := p.AddBuffer(plan.Buffer{Name: "scr", Kind: plan.Scratch, Size: 8 * n})
	rng := rand.New(rand.NewPCG(3, 4))
	samplers := []Sampler{
		{Temperature: 0},
		{Temperature: 0, RepeatPenalty: 1.5},
		{Temperature: 1},
		{Temperature: 0.7, TopK: 10},
		{Temperature: 1.3, TopP: 0.8},
		{Temperature: 1, MinP: 0.1},
		{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.2, PresencePenalty: 0.5, FrequencyPenalty: 0.3},
	}
	for i := range samplers {
		samplers[i].Seed = uint64(i) * 977
		ps, _ := p.AddPass("s")
		a := samplers[i].kernelArgs()
		a.X, a.Out, a.Hist, a.Scratch = plan.Binding{Buf: x}, plan.Binding{Buf: out}, plan.Binding{Buf: hist}, plan.Binding{Buf: scr}
		a.N, a.HistLen = int(n), 32
		d := a.Dispatch()
		d.AddPatch(plan.PatchSampleStep, plan.VarStep, 1, 0)
		ps.Add(d)
	}
	ex, err := newCPU(t).Load(p)
	require.NoError(t, err)
	var host hostSampler
	logits := make([]float32, n)
	hs := make([]int32, 32)
	for trial := range 40 {
		for i := range logits {
			logits[i] = float32(rng.NormFloat64() * 3)
		}
		logits[rng.IntN(n)] = float32(math.NaN())
		for i := range hs {
			hs[i] = int32(rng.IntN(n))
		}
		require.NoError(t, ex.Write(x, 0, ggml.F32Bytes(logits)))
		hb := make([]byte, 4*len(hs))
		for i, v := range hs {
			binary.LittleEndian.PutUint32(hb[4*i:], uint32(v))
		}
		require.NoError(t, ex.Write(hist, 0, hb))
		for i, s := range samplers {
			step := uint64(trial)
			require.NoError(t, ex.Run(i, &plan.Vars{plan.VarStep: int64(step)}))
			b := make([]byte, 4)
			require.NoError(t, ex.Read(out, 0, b))
			want := int32(binary.LittleEndian.Uint32(b))
			require.Equal(t, want, host.sample(s, logits, hs, step), "sampler %d trial %d", i, trial)
		}
	}
}

func TestStopper(t *testing.T) {
	s := &stopper{stops: []string{"</end>", "STOP"}}
	var out strings.Builder
	for _, piece := range []string{"Hello", " wor", "ld </", "en", "d> more"} {
		o, hit := s.push(piece)
		out.WriteString(o)
		if hit {
			break
		}
	}
	require.Equal(t, "Hello world ", out.String())

	s = &stopper{stops: []string{"</end>"}}
	o1, _ := s.push("a </e")
	require.Equal(t, "a ", o1, "a possible stop prefix is held back")
	o2, hit := s.push("x")
	require.False(t, hit)
	require.Equal(t, "</ex", o2, "released once it cannot be a stop string")
	o3, _ := s.push("<")
	require.Equal(t, "", o3)
	require.Equal(t, "<", s.flush())

	s = &stopper{stops: []string{"ab", "b"}}
	o, hit := s.push("xab")
	require.True(t, hit)
	require.Equal(t, "x", o, "the earliest stop string wins")
}

func TestGeneratorStopString(t *testing.T) {
	g, _ := storiesGenerator(t, Options{})
	prompt := g.PromptTokens("Once upon a time", true)
	res, err := g.Generate(context.Background(), prompt, GenerateOptions{MaxTokens: 64, Stop: []string{"named Li"}}, nil)
	require.NoError(t, err)
	require.Equal(t, StopString, res.Reason)
	require.Equal(t, ", there was a little girl ", res.Text)
}

// eosMeta serves a GGUF file's metadata with another EOS id, so that a
// token the model does generate ends the generation.
type eosMeta struct {
	f   *gguf.File
	eos int64
}

func (m eosMeta) get(k string) (gguf.Value, bool) { return m.f.Get(k) }
func (m eosMeta) String(k string) (string, bool) {
	v, ok := m.get(k)
	if !ok {
		return "", false
	}
	return v.String()
}
func (m eosMeta) Strings(k string) ([]string, bool) {
	v, ok := m.get(k)
	if !ok {
		return nil, false
	}
	a, ok := v.Array()
	if !ok {
		return nil, false
	}
	return a.Strings()
}
func (m eosMeta) Int(k string) (int64, bool) {
	if k == "tokenizer.ggml.eos_token_id" {
		return m.eos, true
	}
	v, ok := m.get(k)
	if !ok {
		return 0, false
	}
	return v.Int()
}
func (m eosMeta) Bool(k string) (bool, bool) {
	v, ok := m.get(k)
	if !ok {
		return false, false
	}
	return v.Bool()
}
func (m eosMeta) Float32s(k string) ([]float32, bool) {
	v, ok := m.get(k)
	if !ok {
		return nil, false
	}
	a, ok := v.Array()
	if !ok {
		return nil, false
	}
	return a.Float32s()
}
func (m eosMeta) Int32s(k string) ([]int32, bool) {
	v, ok := m.get(k)
	if !ok {
		return nil, false
	}
	a, ok := v.Array()
	if !ok {
		return nil, false
	}
	return a.Int32s()
}

func TestGeneratorEOS(t *testing.T) {
	gold, _ := loadGolden(t)
	r := gold.Results[0]
	g, f := storiesGenerator(t, Options{})
	eos := r.GeneratedTokens[5] // "girl"
	require.NotContains(t, r.GeneratedTokens[:5], eos)
	tk, err := tokenizer.FromGGUF(eosMeta{f: f, eos: int64(eos)})
	require.NoError(t, err)
	require.Contains(t, tk.StopIDs(), eos)
	g.Tk = tk
	res, err := g.Generate(context.Background(), r.PromptTokens, GenerateOptions{MaxTokens: 64}, nil)
	require.NoError(t, err)
	require.Equal(t, StopEOS, res.Reason)
	require.Equal(t, r.GeneratedTokens[:6], res.Tokens)
	require.Equal(t, ", there was a little", res.Text, "the stop token is not emitted")

	g.M.Reset()
	res, err = g.Generate(context.Background(), r.PromptTokens, GenerateOptions{MaxTokens: 64, IgnoreEOS: true}, nil)
	require.NoError(t, err)
	require.Equal(t, r.GeneratedTokens, res.Tokens)
}

func TestGeneratorContextLimit(t *testing.T) {
	g, _ := storiesGenerator(t, Options{Context: 16})
	prompt := g.PromptTokens("Once upon a time", true)
	res, err := g.Generate(context.Background(), prompt, GenerateOptions{MaxTokens: 64}, nil)
	require.ErrorIs(t, err, ErrContextFull)
	require.Equal(t, StopContext, res.Reason)
	require.Len(t, res.Tokens, 16-len(prompt)+1, "the last position's prediction is still generated")

	g.M.Reset()
	_, err = g.Generate(context.Background(), make([]int32, 17), GenerateOptions{MaxTokens: 1}, nil)
	require.ErrorIs(t, err, ErrContextFull)
	g.M.Reset()
	_, err = g.Generate(context.Background(), nil, GenerateOptions{MaxTokens: 1}, nil)
	require.Error(t, err)
}

// With Slide the generation runs past the context: the older half is
// dropped (after the kept prefix) and the cache rebuilt, and what follows
// is exactly what a fresh model given the kept tokens would produce.
func TestGeneratorSlidesTheWindow(t *testing.T) {
	for _, greedy := range []bool{true, false} {
		g, _ := storiesGenerator(t, Options{Context: 16, F32Cache: true})
		prompt := g.PromptTokens("Once upon a time", true)
		o := GenerateOptions{MaxTokens: 40, Slide: true, Keep: 1}
		if !greedy {
			o.Sampler = Sampler{Temperature: 0.8, TopK: 40, Seed: 7}
		}
		res, err := g.Generate(context.Background(), prompt, o, nil)
		require.NoError(t, err)
		require.Equal(t, StopMaxTokens, res.Reason)
		require.Len(t, res.Tokens, 40)
		ctxToks := g.M.Tokens()
		require.LessOrEqual(t, len(ctxToks), 16)
		require.Equal(t, prompt[0], ctxToks[0], "the kept prefix (BOS) stays")

		// A fresh model fed the same context gives the same logits (up to
		// the batched-vs-single-token summation order).
		want, err := g.M.Logits()
		require.NoError(t, err)
		want = append([]float32(nil), want...)
		g2, _ := storiesGenerator(t, Options{Context: 16, F32Cache: true})
		got, err := g2.M.Prefill(ctxToks)
		require.NoError(t, err)
		require.InDeltaSlice(t, want, got, 1e-4)
		require.Equal(t, argmaxOf(want), argmaxOf(got))
	}
}

func argmaxOf(s []float32) int {
	best := 0
	for i, v := range s {
		if v > s[best] {
			best = i
		}
	}
	return best
}

package llm

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/stretchr/testify/require"
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

// refSampler is the Sample contract written plainly on the host in
// float64 (a full sort of the vocabulary): logit_bias, penalties from the
// counts of every token it is told about, temperature, top-k, top-p, min-p
// and the draw (in index order when nothing truncates).
type refSampler struct {
	s      Sampler
	counts map[int32]int
}

func (r *refSampler) sample(logits []float32, step uint64) int32 {
	s := r.s
	n := len(logits)
	l := make([]float32, n)
	for i, v := range logits {
		if v != v {
			v = float32(math.Inf(-1))
		}
		l[i] = v
	}
	for id := range s.LogitBias {
		l[id] += s.bias(id)
	}
	if s.penalties() {
		for id, c := range r.counts {
			v := l[id]
			if rep := s.RepeatPenalty; rep != 0 && rep != 1 {
				if v > 0 {
					v /= rep
				} else {
					v *= rep
				}
			}
			l[id] = v - (s.PresencePenalty + float32(c)*s.FrequencyPenalty)
		}
	}
	if s.Temperature <= 0 {
		best := 0
		for i, v := range l {
			if v > l[best] {
				best = i
			}
		}
		return int32(best)
	}
	ids := make([]int32, n)
	lmax := float32(math.Inf(-1))
	for i := range l {
		l[i] /= s.Temperature
		lmax = max(lmax, l[i])
		ids[i] = int32(i)
	}
	sort.SliceStable(ids, func(a, b int) bool { return l[ids[a]] > l[ids[b]] })
	if s.TopK > 0 && s.TopK < n {
		ids = ids[:s.TopK]
	}
	var z float64
	if len(ids) == n {
		for _, v := range l { // the whole vocabulary's normaliser in id order
			z += math.Exp(float64(v - lmax))
		}
	} else {
		for _, id := range ids {
			z += math.Exp(float64(l[id] - lmax))
		}
	}
	if len(ids) == n && s.topP() >= 1 && s.MinP <= 0 {
		// nothing truncates: the draw walks the tokens in index order
		target := float64(plan.Uniform(s.Seed, step)) * z
		var cum float64
		for i, v := range l {
			cum += math.Exp(float64(v - lmax))
			if cum > target {
				return int32(i)
			}
		}
		return int32(n - 1)
	}
	keep, cum := len(ids), 0.0
	for i, id := range ids {
		ev := math.Exp(float64(l[id] - lmax))
		if s.MinP > 0 && i > 0 && ev < float64(s.MinP) {
			keep = i
			break
		}
		cum += ev
		if s.topP() < 1 && cum >= float64(s.topP())*z {
			keep = i + 1
			break
		}
	}
	mass := z
	if keep < len(ids) {
		mass = 0
		for _, id := range ids[:keep] {
			mass += math.Exp(float64(l[id] - lmax))
		}
	}
	target := float64(plan.Uniform(s.Seed, step)) * mass
	cum = 0
	for _, id := range ids[:keep] {
		cum += math.Exp(float64(l[id] - lmax))
		if cum > target {
			return id
		}
	}
	return ids[keep-1]
}

// TestSamplingOnBackend: every generation samples on the backend, with
// its own settings and seed, and draws the tokens of the float64
// reference fed the same logits, the penalties counting the prompt's
// window and every generated token (32 tokens, far past a window of 4);
// the seed matters and reproduces.
func TestSamplingOnBackend(t *testing.T) {
	g, _ := storiesGenerator(t, Options{})
	ref, _ := storiesGenerator(t, Options{})
	prompt := g.PromptTokens("Lily wanted to play", true)
	samplers := []Sampler{
		{Temperature: 0.9, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.1, PresencePenalty: 0.1, FrequencyPenalty: 0.05, Seed: 42},
		{Temperature: 0.7, TopK: 40, TopP: 0.95, Seed: 1},
		{Temperature: 1, Seed: 9, FrequencyPenalty: 0.8, PresencePenalty: 0.4, PenaltyLastN: 4},
		{Temperature: 1.2, TopP: 0.8, Seed: 5, LogitBias: map[int32]float32{13: -100, 300: -5, 278: 3}},
		{Temperature: 0, RepeatPenalty: 1.5, PenaltyLastN: -1},
	}
	run := func(s Sampler) Result {
		g.M.Reset()
		r, err := g.Generate(context.Background(), prompt, GenerateOptions{Sampler: s, MaxTokens: 32, IgnoreEOS: true}, nil)
		require.NoError(t, err)
		return r
	}
	for si, s := range samplers {
		got := run(s)
		rs := &refSampler{s: s, counts: map[int32]int{}}
		ref.M.Reset()
		logits, err := ref.M.Prefill(prompt)
		require.NoError(t, err)
		for _, id := range prompt[len(prompt)-s.promptWindow(len(prompt)):] {
			rs.counts[id]++
		}
		for i, tok := range got.Tokens {
			want := rs.sample(logits, uint64(i))
			require.Equal(t, want, tok, "sampler %d token %d", si, i)
			rs.counts[tok]++
			logits, err = ref.M.Decode(tok)
			require.NoError(t, err)
		}
		if si == 0 {
			require.Equal(t, got.Tokens, run(s).Tokens, "same seed, same tokens")
			s.Seed++
			require.NotEqual(t, got.Tokens, run(s).Tokens, "another seed draws other tokens")
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

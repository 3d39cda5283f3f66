package bench

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// The 135M count is SmolLM2-135M's published size.
func TestParams(t *testing.T) {
	require.Equal(t, int64(134515008), SmolLM2.Params())
	// Llama-3.2-1B's published 1,235,814,400 less the embedding rows of
	// the 128,256-token vocabulary that SmolLM2's 49,152 replace
	require.Equal(t, int64(1235814400-(128256-49152)*2048), Llama1B.Params())
	require.Equal(t, Llama1B, Shapes["llama-1b"])
	require.Equal(t, SmolLM2, Shapes["smollm2-135m"])
	require.Empty(t, SmolLM2.OutputNote(ggml.Q4_0), "576 wide: llama.cpp falls back to q8_0 too")
	require.Contains(t, Llama1B.OutputNote(ggml.Q4_0), "Q6_K")
	require.Empty(t, Llama1B.OutputNote(ggml.Q8_0))
}

// A 2-layer file of each type: tensor types as llama.cpp's quantize picks
// them, the tokenizer metadata encodes like the Hugging Face files, the
// chat template renders the kit's reference, and the model runs.
func TestWriteAndMeasure(t *testing.T) {
	tokDir := shared.Path(t, "llm-kit", "tokenizers", "smollm2")
	hf, err := tokenizer.Load(tokDir)
	require.NoError(t, err)
	small := SmolLM2
	small.Layers = 2
	for name, ftype := range Types {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name+".gguf")
			require.NoError(t, WriteFile(path, small, ftype, tokDir, 1))
			f, err := gguf.Open(path)
			require.NoError(t, err)
			defer f.Close()
			var params int64
			for _, tn := range f.Tensors {
				params += tn.Elements()
				want := ftype
				switch {
				case len(tn.Shape) == 1:
					want = ggml.F32
				case tn.Name == "token_embd.weight" && ftype == ggml.Q4_0:
					want = ggml.Q8_0
				}
				require.Equal(t, want, tn.Type, tn.Name)
			}
			require.Equal(t, small.Params(), params)
			_, hasOutput := f.Tensor("output.weight")
			require.False(t, hasOutput, "embeddings are tied")

			tk, err := tokenizer.FromGGUFFile(f)
			require.NoError(t, err)
			for _, s := range testStrings(t) {
				require.Equal(t, hf.Encode(s, false), tk.Encode(s, false), "%q", s)
			}
			tpl, err := chat.ForModel(f, tk)
			require.NoError(t, err)
			require.Equal(t, "gguf", tpl.Name)
			out, err := tpl.Render([]chat.Message{{Role: "user", Content: "Hi"}}, chat.Options{AddGenerationPrompt: true})
			require.NoError(t, err)
			require.Equal(t, "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", out)

			be := cpu.New(cpu.Options{Threads: 2})
			defer be.Close()
			m, err := llm.Load(be, f, llm.Options{Context: 64, Batch: 32})
			require.NoError(t, err)
			defer m.Close()
			pp, err := Prompt(m, 32, 2)
			require.NoError(t, err)
			measured := 0
			tg, err := Generate(m, 8, 2, func() { measured++ })
			require.NoError(t, err)
			chained, err := GenerateChained(llm.NewGenerator(m, tk), 8, 0, 2, llm.Sampler{}, func() { measured++ })
			require.NoError(t, err)
			require.Equal(t, 2, measured, "measure is called once per test, after the warm-up")
			require.Equal(t, "tg8 chained", chained.Test)
			// sampled as a chat request is (temperature, no top-k)
			sampled, err := GenerateChained(llm.NewGenerator(m, tk), 8, 0, 2, llm.Sampler{Temperature: 0.7, Seed: 1}, nil)
			require.NoError(t, err)
			require.Equal(t, "tg8 chained temp 0.7", sampled.Test)
			require.Len(t, sampled.TokS, 2)
			// after a chat prompt's worth of cached tokens
			deep, err := GenerateChained(llm.NewGenerator(m, tk), 8, 20, 1, llm.Sampler{Temperature: 0.7, Seed: 1}, nil)
			require.NoError(t, err)
			require.Equal(t, "tg8 chained temp 0.7 @ d20", deep.Test)
			require.Equal(t, 20+1+7, m.Pos(), "the depth, the prompt token, the generated ones but the last (not fed)")
			_, err = GenerateChained(llm.NewGenerator(m, tk), 64, 0, 1, llm.Sampler{}, nil)
			require.ErrorContains(t, err, "context of 65")
			_, err = GenerateChained(llm.NewGenerator(m, tk), 8, 60, 1, llm.Sampler{}, nil)
			require.ErrorContains(t, err, "context of 69")
			for _, r := range []Result{pp, tg, chained} {
				require.Len(t, r.TokS, 2)
				require.Greater(t, r.Mean(), 0.0)
				require.False(t, math.IsNaN(r.Stddev()))
			}
			require.Equal(t, "pp32", pp.Test)
			require.Equal(t, "tg8", tg.Test)

			// at depth: the depth stays cached, each repetition adds n
			// tokens after it
			dtg, err := GenerateAt(m, 8, 40, 2, nil)
			require.NoError(t, err)
			require.Equal(t, "tg8 @ d40", dtg.Test)
			require.Len(t, dtg.TokS, 2)
			require.Equal(t, 48, m.Pos())
			dpp, err := PromptAt(m, 16, 48, 1)
			require.NoError(t, err)
			require.Equal(t, "pp16 @ d48", dpp.Test)
			require.Equal(t, 64, m.Pos())
			_, err = GenerateAt(m, 8, 57, 1, nil)
			require.ErrorContains(t, err, "tg8 @ d57 needs a context of 65")

			// tied embeddings: a token reads every tensor once
			var all int64
			for _, tn := range f.Tensors {
				all += tn.Bytes
			}
			require.Equal(t, all, WeightBytesPerToken(f))
			logits, err := m.Logits()
			require.NoError(t, err)
			for _, v := range logits {
				require.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0))
			}
			_, err = Prompt(m, 65, 1)
			require.ErrorContains(t, err, "context")
		})
	}
}

// With a separate output projection a token reads one embedding row.
func TestWeightBytesUntied(t *testing.T) {
	f, err := gguf.Open(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	defer f.Close()
	out, ok := f.Tensor("output.weight")
	require.True(t, ok, "stories260K has its own output projection")
	emb, _ := f.Tensor("token_embd.weight")
	var all int64
	for _, tn := range f.Tensors {
		all += tn.Bytes
	}
	require.Positive(t, out.Bytes)
	require.Equal(t, all-emb.Bytes+emb.Bytes/emb.Shape[1], WeightBytesPerToken(f))
}

func TestWriteErrors(t *testing.T) {
	tokDir := shared.Path(t, "llm-kit", "tokenizers", "smollm2")
	p := filepath.Join(t.TempDir(), "x.gguf")
	require.ErrorContains(t, WriteFile(p, SmolLM2, ggml.Q4_K, tokDir, 1), "unsupported")
	bad := SmolLM2
	bad.Vocab = 1000
	require.ErrorContains(t, WriteFile(p, bad, ggml.Q8_0, tokDir, 1), "tokens")
	require.ErrorContains(t, WriteFile(p, SmolLM2, ggml.Q8_0, t.TempDir(), 1), "vocab.json")
	_, err := os.Stat(p)
	require.True(t, os.IsNotExist(err), "a failed write leaves no file")
}

func testStrings(t *testing.T) []string {
	b, err := os.ReadFile(shared.Path(t, "llm-kit", "references", "tokenize", "strings.json"))
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if s, ok := x["text"].(string); ok {
				out = append(out, s)
				return
			}
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	require.NotEmpty(t, out)
	return out
}

// BenchmarkSmolLM2 is pp512 and tg128 on the full 30-layer SmolLM2-135M
// shape with 2 threads (tok/s is the reported metric; one iteration is
// one repetition). Run it with -benchtime 3x or so: writing the three
// files takes a while.
func BenchmarkSmolLM2(b *testing.B) {
	tokDir := shared.Path(b, "llm-kit", "tokenizers", "smollm2")
	for _, name := range []string{"f16", "q8_0", "q4_0"} {
		b.Run(name, func(b *testing.B) { benchType(b, tokDir, name) })
	}
}

func benchType(b *testing.B, tokDir, name string) {
	path := filepath.Join(b.TempDir(), name+".gguf")
	if err := WriteFile(path, SmolLM2, Types[name], tokDir, 1); err != nil {
		b.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	be := cpu.New(cpu.Options{Threads: 2})
	defer be.Close()
	m, err := llm.Load(be, f, llm.Options{Context: 1024, Batch: 512})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for _, test := range []struct {
		name string
		run  func(int) (Result, error)
	}{
		{"pp512", func(reps int) (Result, error) { return Prompt(m, 512, reps) }},
		{"tg128", func(reps int) (Result, error) { return Generate(m, 128, reps, nil) }},
	} {
		b.Run(test.name, func(b *testing.B) {
			if _, err := test.run(0); err != nil { // warm-up only
				b.Fatal(err)
			}
			b.ResetTimer()
			r, err := test.run(b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.Mean(), "tok/s")
		})
	}
}

package cuda

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/llm/bench"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// TestFakeLaunchesPerToken counts the kernels a decode token launches on
// the CUDA host (graphs off, as `HARK_CUDA_GRAPHS=0 hark bench llm` counts
// them) for the SmolLM2-135M shape in q8_0, the bench's tg128 positions:
// 4 a layer and the embedding and the output product (122) with the cuda
// family's default tuning on an H200's 132 multiprocessors (Cores=132; the
// fake has 4), the output product folded into decode attention (issue #34:
// round 11's fold, by 8 slices of Wo's rows since the seventeenth
// session); 5 a layer (152) with the fold off (AttnFoldO=1) or where the
// folded launch's 72 threadgroups would not fit the GPU at once (the
// fake's 4).
func TestFakeLaunchesPerToken(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and uploads the 30-layer SmolLM2 shape (140 MB)")
	}
	var buf bytes.Buffer
	require.NoError(t, bench.Write(&buf, bench.SmolLM2, ggml.Q8_0, shared.Path(t, "llm-kit", "tokenizers", "smollm2"), 1))
	f, err := gguf.Parse(buf.Bytes())
	require.NoError(t, err)
	const tokens = 128
	for _, c := range []struct {
		tune string
		want int
	}{{"Cores=132", 4*30 + 2}, {"Cores=132,AttnFoldO=1", 5*30 + 2}, {"", 5*30 + 2}} {
		fake := withFake(t, 90)
		b, err := New(Options{NoGraphs: true, Tune: c.tune})
		require.NoError(t, err)
		m, err := llm.Load(b, f, llm.Options{Context: 256})
		require.NoError(t, err)
		before := len(fake.launches)
		for i := range tokens {
			_, err := m.Decode(int32(i + 1))
			require.NoError(t, err)
		}
		names := map[string]int{}
		for _, l := range fake.launches[before:] {
			names[l.fn]++
		}
		n := len(fake.launches) - before
		t.Logf("tune %q: %d launches for %d tokens, %.1f a token: %v", c.tune, n, tokens, float64(n)/tokens, names)
		require.Equal(t, c.want*tokens, n, "tune %q: launches per token %v", c.tune, names)
		require.NoError(t, m.Close())
		b.Close()
	}
}

// TestFakeWhisperStepLaunches counts the kernels one Whisper decoder token
// (PassStep, graphs off) launches on the CUDA host for the kit's tiny.en
// q8_0 model (4 decoder layers): 8 a layer (Q|K|V with its LayerNorm in the
// product's prologue (LayerNormMatVec), self-attention, its output product,
// the cross query with its LayerNorm, cross-attention, its output product,
// the MLP's up product with its LayerNorm and GELU in its epilogue
// (MatVec's FlagGELUOut), the down product), then the embedding with the
// positional embedding added in its launch, the final LayerNorm and the
// logits product (whose ~26,000 SIMD-groups would each take the row's
// statistics: it measured slower fused): 35, where the step launched 47
// with each LayerNorm a launch of its own (issue #34), 51 with a GELU
// launch, and 52 with the positional embedding's add.
func TestFakeWhisperStepLaunches(t *testing.T) {
	f, err := whisper.OpenFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	defer f.Close()
	fake := withFake(t, 90)
	b, err := New(Options{NoGraphs: true})
	require.NoError(t, err)
	defer b.Close()
	m, err := f.Load(b, whisper.Options{Beams: 1})
	require.NoError(t, err)
	defer m.Close()
	const tokens = 8
	before := len(fake.launches)
	for i := range tokens {
		_, err := m.Prompt([]int32{int32(50257 + i)}, 3+i)
		require.NoError(t, err)
	}
	names := map[string]int{}
	for _, l := range fake.launches[before:] {
		names[l.fn]++
	}
	n := len(fake.launches) - before
	t.Logf("%d launches for %d decoder tokens, %.1f a token: %v", n, tokens, float64(n)/tokens, names)
	require.Equal(t, (8*4+3)*tokens, n, "launches per token %v", names)
	require.Equal(t, tokens, names["hark_layer_norm"], "a decoder step's LayerNorms but the last are in its products: %v", names)
	require.Zero(t, names["hark_add"], "a decoder step adds the positions in the embedding's launch: %v", names)
	require.Zero(t, names["hark_gelu"], "a decoder step's up products apply GELU: %v", names)
}

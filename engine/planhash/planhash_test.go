package planhash

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/llm/bench"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// The recorded digests. Plans do not depend on the backend (model code
// builds them before any backend sees them), so recording them needs no
// kernel to run. The two LLM digests changed on purpose with issue 33
// (every LLM plan now ends in the Sample pass, whose settings are step
// data, greedy included) and with issue 34 round 3 (Q|K|V, and gate|up
// where every layer allows, run as one product over the file's back-to-back
// matrices: stories260K fuses Q|K|V, the bench shape both) and round 4
// (matrices that lie apart are stacked at load: stories260K's gate|up,
// with ffn_down between them, now fuses too) and round 7 (decode's RoPE,
// KV-cache write and attention as one RopeAttention dispatch) and round 11
// (decode's attention and its output product as one RopeAttentionMatVec
// dispatch). The Whisper
// digests changed with issue 34 round 8 (the decoder's one-token passes,
// step and beams, store K/V and attend in one RopeAttention dispatch, and
// every decoder pass projects Q|K|V with one product over the matrices
// stacked at load) and with issue 36 (a greedy window chained on the
// backend: the "select" passes filter, pick and track the window's state
// with WhisperTrack, the track buffer beside them; then beam search's
// candidates on the backend: the "beam top" passes filter every beam and
// write its top tokens with Sample's logprobs record; then the beams
// ranked on the backend: the beam state buffer and WhisperBeams at the end
// of the beam-top passes; then word timing on the backend: the "align
// words" pass, WhisperAlign's path and TokenLogprob's probabilities after
// the forced pass, the align.out buffer beside them) and with issue 35's
// check (Whisper plans ask for float activations: FloatActivations is in
// the digest). Issue 34's Whisper step (dec34) changed all five: Embed
// gained an optional Add binding (NoBuf in the LLM plans; Whisper's
// positional embedding in its decoder passes, no Add dispatch), and the
// Whisper mat-vec passes folded their LayerNorms and the MLP's GELU into
// LayerNormMatVec, which measured slower and went (the digests of the
// fusion turned off, unchanged by the removal). Branch gelu34 changed the
// three Whisper digests: a step's and the beams' MLP up product sets
// MatVec's FlagGELUOut and their GELU dispatches went (the LLM plans'
// products carry the new Flags word as 0: their digests are unchanged).
// Branch grid38 changed all five: Sample gained an optional Draws binding
// (a step's draws in one dispatch, the batch plan's), NoBuf in these
// plans' Sample dispatches, and its params M, Ldx, Slots and XRows (0).
// Branch wd35 changed the three Whisper digests: the one-token step pass
// takes its 12 in-layer LayerNorms into the products (LayerNormMatVec,
// back in the kernel set, a new id after TokenLogprob, so the LLM plans'
// digests are unchanged).
var want = map[string]string{
	"stories260K greedy":      "c85deb0cd2c0225f57475a1cbbb49037e28e938f0f0b4f86d64e382cc5c30868",
	"whisper kit f16 greedy":  "fb768adfea630b0e5e988c7475a31c122351dfe58ee2351e44f3fb0042c25c13",
	"whisper kit f16 beam 5":  "7a6c925393959cb3b0225af17d46d382735f805978ebbb8c72fdeadf22727fa0",
	"whisper kit q8_0 greedy": "76a6d6a60768244ae2e417ff644288d9c7a1a811b53cd36dc86d3b6a4d79222b",
	"SmolLM2-135M shape q4_0": "3dff70015eaf3e40273267788194a2c7be0e51c5c70802a3a7b40b817e04c198",
}

// recorder is a backend that records the digest of the plan it is given
// and refuses to load it.
type recorder struct{ digest string }

var errRecorded = errors.New("planhash: recorded, not loaded")

func (r *recorder) Name() string { return "planhash" }

func (r *recorder) Load(p *plan.Plan) (plan.Executable, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d := p.Digest()
	r.digest = hex.EncodeToString(d[:])
	return nil, errRecorded
}

func llmDigest(t *testing.T, f *gguf.File, opt llm.Options) string {
	t.Helper()
	var r recorder
	_, err := llm.Load(&r, f, opt)
	require.ErrorIs(t, err, errRecorded)
	return r.digest
}

func whisperDigest(t *testing.T, name string, beams int) string {
	t.Helper()
	f, err := whisper.OpenFile(shared.Path(t, "whisper-kit", "models", name))
	require.NoError(t, err)
	defer f.Close()
	var r recorder
	_, err = f.Load(&r, whisper.Options{Beams: beams})
	require.ErrorIs(t, err, errRecorded)
	return r.digest
}

func TestPlanDigests(t *testing.T) {
	got := map[string]string{}

	stories, err := gguf.Open(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	defer stories.Close()
	got["stories260K greedy"] = llmDigest(t, stories, llm.Options{})
	// Sampler settings are step data (issue 33): every sampler runs the
	// one plan, so there is no second stories260K plan to record.

	got["whisper kit f16 greedy"] = whisperDigest(t, "ggml-kit-tiny.en-f16.bin", 1)
	got["whisper kit f16 beam 5"] = whisperDigest(t, "ggml-kit-tiny.en-f16.bin", 5)
	got["whisper kit q8_0 greedy"] = whisperDigest(t, "ggml-kit-tiny.en-q8_0.bin", 1)

	// The model hark bench llm writes (random weights, the real SmolLM2
	// tokenizer), built in memory.
	var buf bytes.Buffer
	require.NoError(t, bench.Write(&buf, bench.SmolLM2, ggml.Q4_0, shared.Path(t, "llm-kit", "tokenizers", "smollm2"), 1))
	smol, err := gguf.Parse(buf.Bytes())
	require.NoError(t, err)
	got["SmolLM2-135M shape q4_0"] = llmDigest(t, smol, llm.Options{})

	for name, d := range got {
		t.Logf("%q: %q,", name, d)
	}
	require.Equal(t, want, got)
}

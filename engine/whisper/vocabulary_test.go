package whisper

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// Vocabulary tokens open every window's prompt; earlier text fills what
// is left, newest last.
func TestWithVocabulary(t *testing.T) {
	require.Equal(t, []int32{7, 8}, withVocabulary(nil, []int32{7, 8}, 5))
	require.Equal(t, []int32{1, 2, 7, 8}, withVocabulary([]int32{1, 2}, []int32{7, 8}, 5))
	require.Equal(t, []int32{1, 2, 6, 7, 8}, withVocabulary([]int32{1, 2}, []int32{4, 5, 6, 7, 8}, 5))
	require.Equal(t, []int32{1, 2, 3}, withVocabulary([]int32{1, 2, 3, 4}, []int32{7, 8}, 3))
}

// A vocabulary reaches the decoder as prompt tokens: on a one-window clip
// it decodes exactly as the same tokens given as the initial prompt do,
// and differently from no prompt (the kit model was trained with
// prompts, so its log-probabilities move).
func TestVocabularyReachesDecoder(t *testing.T) {
	t.Parallel()
	f, m := loadKit(t, "ggml-kit-tiny.en-f16.bin")
	kitMemoEncodes(t, m, "ggml-kit-tiny.en-f16.bin") // the three runs decode one window: it is encoded once at most
	path := shared.Path(t, "audio", "jfk.wav")
	run := func(mod func(*TranscribeOptions)) *Result {
		opt := DefaultTranscribeOptions()
		opt.Temperatures = []float32{0}
		opt.Language = "en"
		mod(&opt)
		r, err := f.TranscribeFile(context.Background(), m, path, opt)
		require.NoError(t, err)
		require.NotEmpty(t, r.Segments)
		return r
	}
	terms := f.Vocab.Encode(" Kennedy, Americans, Hark.")
	plain := run(func(*TranscribeOptions) {})
	asPrompt := run(func(o *TranscribeOptions) { o.InitialPrompt = terms })
	asVocab := run(func(o *TranscribeOptions) { o.Vocabulary = terms })
	require.Equal(t, asPrompt.Segments[0].Tokens, asVocab.Segments[0].Tokens)
	require.InDelta(t, asPrompt.Segments[0].AvgLogprob, asVocab.Segments[0].AvgLogprob, 1e-9)
	require.Greater(t, abs(plain.Segments[0].AvgLogprob-asVocab.Segments[0].AvgLogprob), 1e-4,
		"the vocabulary changed nothing: it did not reach the decoder")
}

func abs(x float64) float64 { return max(x, -x) }

// A logit bias on a token makes the decoder pick it: a large bias on a
// word the clip does not contain puts it first.
func TestLogitBias(t *testing.T) {
	t.Parallel()
	f, m := loadKit(t, "ggml-kit-tiny.en-f16.bin")
	require.NoError(t, m.Encode(readF32(t, shared.Path(t, "whisper-kit", "reference", "tensors", "jfk.mel.f32"))))
	sp := f.Vocab.Specials()
	opt := DecodeOptions{WithoutTimestamps: true, SuppressBlank: f.Vocab.SuppressBlank(), Suppress: []int32{sp.SOTPrev}, SampleLen: 3}
	r, err := m.DecodeWindow(opt)
	require.NoError(t, err)
	word := f.Vocab.Encode(" Kubernetes")[0]
	require.NotEqual(t, word, r.Tokens[0])
	opt.LogitBias = map[int32]float32{word: 100}
	r, err = m.DecodeWindow(opt)
	require.NoError(t, err)
	require.Equal(t, word, r.Tokens[0])
}
